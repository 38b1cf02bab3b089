// One Graphile Worker process, started by bench/run.py for one measurement; the Node twin of
// bench/worker.py, same arguments, same protocol, same output:
//
//   node worker.mjs URL --concurrency=C --mode=drain --jobs=N --out=FILE --remaining=SQL [--batched]
//   node worker.mjs URL --concurrency=C --mode=latency --jobs=N --out=FILE [--batched]
//   node worker.mjs URL --concurrency=C --mode=share --jobs=N --out=FILE [--batched]
//
// --work-ms=MS makes each handler await MS milliseconds (W6, an API call) and
// --connections=K sets the pool to K connections instead of max(10, C + 2).
//
// drain: the N jobs are already queued. Once N handlers have started, polls Graphile's own
// table (the REMAINING query, every POLL_MS) until no job is left, then stops. Writes
// wall-clock stamps in seconds (comparable with Python's time.time() on this host):
// {process_start, first_start, last_start, done, handlers}.
//
// latency: an idle worker. Prints READY on stdout once a warm-up job (seq < 0) has run,
// records the handler start of every job seq >= 0, stops once N of them have started and
// writes {"starts": {seq: time}}.
//
// Graphile Worker as configured here (bench/README.md says why):
// - default: concurrentJobs C, each fetching its own job and completing it on its own;
// - --batched: also localQueue.size = C + 1 (one fetch locks a batch that the C runners take
//   from; the size the docs suggest starting with) and completeJobBatchDelay = 0 /
//   failJobBatchDelay = 0 (completions made in the same tick go in one statement);
// - a pool of max(10, C + 2) (its docs' advice), LISTEN/NOTIFY on (always), pollInterval
//   default (2 s), and its own pgPool so the harness's socket URL reaches node-postgres.
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { run, Logger } from 'graphile-worker'
import { pool, logFactory, now, TASK } from './common.mjs'

const STARTED = now()
const POLL_MS = 5 // how often the end of a drain is checked, once every handler has started

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    concurrency: { type: 'string' },
    mode: { type: 'string' },
    jobs: { type: 'string' },
    out: { type: 'string' },
    remaining: { type: 'string' },
    batched: { type: 'boolean', default: false },
    'work-ms': { type: 'string', default: '0' },
    connections: { type: 'string' }
  }
})
const url = positionals[0]
const concurrency = Number(values.concurrency)
const jobs = Number(values.jobs)
const workMs = Number(values['work-ms'])
const connections = values.connections === undefined ? Math.max(10, concurrency + 2) : Number(values.connections)
if (!url || !(concurrency > 0) || !(jobs > 0) || !values.out || !['drain', 'latency', 'share'].includes(values.mode)) {
  console.error('usage: worker.mjs URL --concurrency=C --mode=drain|latency|share --jobs=N --out=FILE [--remaining=SQL] [--batched] [--work-ms=MS] [--connections=K]')
  process.exit(2)
}
if (!(workMs >= 0) || !(connections >= 2)) {
  console.error('--work-ms must be >= 0 and --connections >= 2')
  process.exit(2)
}
if (values.mode === 'drain' && !values.remaining) {
  console.error('drain needs --remaining=SQL')
  process.exit(2)
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function runWorker (onJob) {
  const pgPool = pool(url, connections)
  const worker = {}
  if (values.batched) {
    worker.localQueue = { size: concurrency + 1 }
    worker.completeJobBatchDelay = 0
    worker.failJobBatchDelay = 0
  }
  const runner = await run({
    pgPool,
    concurrency,
    noHandleSignals: true,
    logger: new Logger(logFactory),
    taskList: {
      [TASK]: async payload => {
        onJob(payload.seq)
        if (workMs > 0) await sleep(workMs)
      }
    },
    preset: { worker }
  })
  return { runner, pgPool }
}

async function stop ({ runner, pgPool }) {
  await runner.stop()
  await runner.promise
  await pgPool.end()
}

async function drain () {
  const stamps = { process_start: STARTED, handlers: 0 }
  let allStarted
  const started = new Promise(resolve => { allStarted = resolve })
  const watcher = pool(url, 1)
  const w = await runWorker(() => {
    const t = now()
    if (stamps.handlers === 0) stamps.first_start = t
    stamps.handlers += 1
    if (stamps.handlers === jobs) {
      stamps.last_start = t
      allStarted()
    }
  })
  await started
  for (;;) {
    const { rows } = await watcher.query(values.remaining)
    if (Number(rows[0].count) === 0) {
      stamps.done = now()
      break
    }
    await sleep(POLL_MS)
  }
  await stop(w)
  await watcher.end()
  return stamps
}

// share (W5): one of several workers draining one queue, until SIGTERM.
async function share () {
  const stamps = { process_start: STARTED, handlers: 0 }
  let stopped
  const stopping = new Promise(resolve => { stopped = resolve })
  process.on('SIGTERM', () => stopped())
  const w = await runWorker(() => {
    if (stamps.handlers === 0) stamps.first_start = now()
    stamps.handlers += 1
  })
  await stopping
  await stop(w)
  return stamps
}

async function latency () {
  const starts = {}
  let count = 0
  let ready = false
  let allStarted
  const started = new Promise(resolve => { allStarted = resolve })
  const w = await runWorker(seq => {
    const t = now()
    if (seq < 0) {
      if (!ready) {
        ready = true
        process.stdout.write('READY\n')
      }
      return
    }
    if (!(seq in starts)) count += 1
    starts[seq] = t
    if (count >= jobs) allStarted()
  })
  await started
  await sleep(200) // let the last completions land before shutting down
  await stop(w)
  return { starts }
}

const result = await ({ drain, latency, share })[values.mode]()
writeFileSync(values.out, JSON.stringify(result))
