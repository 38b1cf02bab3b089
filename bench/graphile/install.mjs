// node install.mjs URL: create Graphile Worker's schema (its migrations).
import { runMigrations, Logger } from 'graphile-worker'
import { pool, logFactory } from './common.mjs'

const pgPool = pool(process.argv[2], 2)
await runMigrations({ pgPool, logger: new Logger(logFactory) })
await pgPool.end()
