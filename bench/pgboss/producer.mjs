// node producer.mjs URL: W2's producer. Prints READY once connected, then for every seq read
// on stdin sends one job with send() (its own statement, its own commit) and answers
// "<seq> <call start> <commit returned>" once the commit returned: wall-clock seconds read
// here, on the same clock as the Python side's time.time(), so the pipe is not measured.
import { startBoss, QUEUE, PRODUCER, lines } from './common.mjs'

const boss = await startBoss(process.argv[2], PRODUCER)
process.stdout.write('READY\n')
for await (const line of lines()) {
  const seq = Number(line)
  const started = performance.timeOrigin + performance.now()
  await boss.send(QUEUE, { seq })
  const committed = performance.timeOrigin + performance.now()
  process.stdout.write(`${seq} ${(started / 1000).toFixed(6)} ${(committed / 1000).toFixed(6)}\n`)
}
await boss.stop({ graceful: false })
