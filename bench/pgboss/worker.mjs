// One pg-boss worker process, started by bench/run.py for one measurement; the Node twin of
// bench/worker.py, same arguments, same protocol, same output:
//
//   node worker.mjs URL --concurrency=C --mode=drain --jobs=N --out=FILE --remaining=SQL
//   node worker.mjs URL --concurrency=C --mode=latency --jobs=N --out=FILE
//   node worker.mjs URL --concurrency=C --mode=share --jobs=N --out=FILE
//
// drain: the N jobs are already queued. Once N handlers have started, polls pg-boss's own
// table (the REMAINING query, every POLL_MS) until no job is left unfinished, then stops.
// Writes wall-clock stamps in seconds (comparable with Python's time.time() on this host):
// {process_start, first_start, last_start, done, handlers}.
//
// latency: an idle worker. Prints READY on stdout once a warm-up job (seq < 0) has run,
// records the handler start of every job seq >= 0, stops once N of them have started and
// writes {"starts": {seq: time}}.
//
// pg-boss as configured here (bench/README.md says why):
// - work(queue, { batchSize: 10, localConcurrency: C, burstWhenBatchFull: true }): C pollers,
//   each fetching up to 10 jobs and running the handler on its batch, so C batch handlers at
//   once and up to 10 x C jobs leased;
// - a pool of C + 2 connections (max), useListenNotify with the queue created notify: true, so
//   a new job wakes the workers at once; polling intervals left at their defaults (2 s, and
//   30 s while NOTIFY is active), maintenance and scheduling on (defaults).
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { startBoss, connection, now, QUEUE } from './common.mjs'

const STARTED = now()
const POLL_MS = 5 // how often the end of a drain is checked, once every handler has started
const BATCH_SIZE = 10

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    concurrency: { type: 'string' },
    mode: { type: 'string' },
    jobs: { type: 'string' },
    out: { type: 'string' },
    remaining: { type: 'string' }
  }
})
const url = positionals[0]
const concurrency = Number(values.concurrency)
const jobs = Number(values.jobs)
if (!url || !(concurrency > 0) || !(jobs > 0) || !values.out || !['drain', 'latency', 'share'].includes(values.mode)) {
  console.error('usage: worker.mjs URL --concurrency=C --mode=drain|latency|share --jobs=N --out=FILE [--remaining=SQL]')
  process.exit(2)
}
if (values.mode === 'drain' && !values.remaining) {
  console.error('drain needs --remaining=SQL')
  process.exit(2)
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function runWorker (onJob) {
  const boss = await startBoss(url, { max: concurrency + 2, useListenNotify: true })
  await boss.work(
    QUEUE,
    { batchSize: BATCH_SIZE, localConcurrency: concurrency, burstWhenBatchFull: true },
    async batch => {
      for (const job of batch) onJob(job.data.seq)
    }
  )
  return boss
}

async function drain () {
  const stamps = { process_start: STARTED, handlers: 0 }
  let allStarted
  const started = new Promise(resolve => { allStarted = resolve })
  const watcher = new pg.Client(connection(url))
  await watcher.connect()
  const boss = await runWorker(() => {
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
  await boss.stop({ graceful: true })
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
  await w.stop({ graceful: true })
  return stamps
}

async function latency () {
  const starts = {}
  let count = 0
  let ready = false
  let allStarted
  const started = new Promise(resolve => { allStarted = resolve })
  const boss = await runWorker(seq => {
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
  await boss.stop({ graceful: true })
  return { starts }
}

const result = await ({ drain, latency, share })[values.mode]()
writeFileSync(values.out, JSON.stringify(result))
