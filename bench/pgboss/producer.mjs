// node producer.mjs URL: W2's producer. Prints READY once connected, then for every seq read
// on stdin sends one job with send() (its own statement, its own commit) and answers
// "<seq> <ms the send() call took, measured here>" once the commit returned.
import { startBoss, QUEUE, PRODUCER, lines } from './common.mjs'

const boss = await startBoss(process.argv[2], PRODUCER)
process.stdout.write('READY\n')
for await (const line of lines()) {
  const seq = Number(line)
  const started = performance.now()
  await boss.send(QUEUE, { seq })
  const ms = performance.now() - started
  process.stdout.write(`${seq} ${ms.toFixed(4)}\n`)
}
await boss.stop({ graceful: false })
