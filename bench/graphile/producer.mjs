// node producer.mjs URL: W2's producer. Prints READY once connected, then for every seq read
// on stdin adds one job with addJob() (its own statement, its own commit) and answers
// "<seq> <call start> <commit returned>" once the commit returned: wall-clock seconds read
// here, on the same clock as the Python side's time.time(), so the pipe is not measured.
import { makeWorkerUtils, Logger } from 'graphile-worker'
import { pool, logFactory, lines, TASK } from './common.mjs'

const pgPool = pool(process.argv[2], 1)
const utils = await makeWorkerUtils({ pgPool, logger: new Logger(logFactory) })
process.stdout.write('READY\n')
for await (const line of lines()) {
  const seq = Number(line)
  const started = performance.timeOrigin + performance.now()
  await utils.addJob(TASK, { seq })
  const committed = performance.timeOrigin + performance.now()
  process.stdout.write(`${seq} ${(started / 1000).toFixed(6)} ${(committed / 1000).toFixed(6)}\n`)
}
await utils.release()
await pgPool.end()
