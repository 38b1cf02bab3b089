// node install.mjs URL: create pg-boss's schema (start() does, migrate on) and the queue.
import { startBoss, QUEUE } from './common.mjs'

const boss = await startBoss(process.argv[2], { max: 2, supervise: false, schedule: false })
// pg-boss 10+ sends and works only on queues that exist. notify: jobs sent to it NOTIFY the
// workers that listen (useListenNotify), instead of waiting out their polling interval.
await boss.createQueue(QUEUE, { notify: true })
await boss.stop({ graceful: false })
