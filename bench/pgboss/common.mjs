// Shared by the pg-boss scripts that bench/systems.py and bench/run.py start.
import { PgBoss } from 'pg-boss'
import { parse } from 'pg-connection-string'

export const QUEUE = 'noop'

// Wall clock in seconds with sub-millisecond precision, comparable with Python's time.time()
// on the same host (timeOrigin is the realtime clock at process start, now() is monotonic since).
export const now = () => (performance.timeOrigin + performance.now()) / 1000

// The harness passes postgresql://user@/db?host=/socket/dir[&port=N], which the WHATWG URL
// parser refuses (credentials, no host): node-postgres's own parser reads it, and a host
// starting with '/' is a Unix socket directory to node-postgres.
export function connection (url) {
  const c = parse(url)
  return {
    host: c.host || undefined,
    port: Number(c.port || 5432),
    user: c.user || undefined,
    password: c.password || undefined,
    database: c.database || undefined
  }
}

// A started PgBoss; errors go to stderr (stdout is the protocol with the Python side).
export async function startBoss (url, options = {}) {
  const boss = new PgBoss({ ...connection(url), ...options })
  boss.on('error', err => console.error('pg-boss error:', err))
  boss.on('warning', w => console.error('pg-boss warning:', w?.message ?? w))
  await boss.start()
  return boss
}

// Options for a process that only sends: no maintenance, no cron, no migration check, one
// connection (the other systems' producers use one connection too).
export const PRODUCER = { max: 1, supervise: false, schedule: false, migrate: false }

// Read stdin line by line.
export async function * lines (stream = process.stdin) {
  stream.setEncoding('utf8')
  let buffer = ''
  for await (const chunk of stream) {
    buffer += chunk
    let i
    while ((i = buffer.indexOf('\n')) >= 0) {
      yield buffer.slice(0, i)
      buffer = buffer.slice(i + 1)
    }
  }
  if (buffer) yield buffer
}
