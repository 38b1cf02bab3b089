// node enqueue.mjs URL < [[start, stop], ...]: W1's enqueue with pg-boss's batch API, insert(),
// one call per [start, stop) range of seqs. Prints the seconds the calls took (connecting not
// counted) as JSON on stdout.
import { startBoss, QUEUE, PRODUCER, lines } from './common.mjs'

let input = ''
for await (const line of lines()) input += line
const batches = JSON.parse(input)
const boss = await startBoss(process.argv[2], PRODUCER)
const started = performance.now()
for (const [start, stop] of batches) {
  const jobs = []
  for (let seq = start; seq < stop; seq++) jobs.push({ data: { seq } })
  await boss.insert(QUEUE, jobs)
}
const seconds = (performance.now() - started) / 1000
await boss.stop({ graceful: false })
process.stdout.write(JSON.stringify({ seconds }) + '\n')
