// node enqueue.mjs URL < [[start, stop], ...]: W1's enqueue with Graphile Worker's batch API,
// addJobs(), one call per [start, stop) range of seqs, on one connection. Prints the seconds
// the calls took (connecting not counted) as JSON on stdout.
import { makeWorkerUtils, Logger } from 'graphile-worker'
import { pool, logFactory, lines, TASK } from './common.mjs'

let input = ''
for await (const line of lines()) input += line
const batches = JSON.parse(input)
const pgPool = pool(process.argv[2], 1)
const utils = await makeWorkerUtils({ pgPool, logger: new Logger(logFactory) })
const started = performance.now()
for (const [start, stop] of batches) {
  const jobs = []
  for (let seq = start; seq < stop; seq++) jobs.push({ identifier: TASK, payload: { seq } })
  await utils.addJobs(jobs)
}
const seconds = (performance.now() - started) / 1000
await utils.release()
await pgPool.end()
process.stdout.write(JSON.stringify({ seconds }) + '\n')
