// Shared by the Graphile Worker scripts that bench/systems.py and bench/run.py start.
import pg from 'pg'
import { parse } from 'pg-connection-string'

export const TASK = 'noop'

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

// A pool for Graphile Worker (it takes `pgPool` instead of a connection string), errors to
// stderr (stdout is the protocol with the Python side).
export function pool (url, max) {
  const p = new pg.Pool({ ...connection(url), max })
  p.on('error', err => console.error('pool error:', err))
  p.on('connect', client => client.on('error', err => console.error('client error:', err)))
  return p
}

// Graphile Worker's own logging goes to stderr, warnings and errors only.
export const logFactory = scope => (level, message) => {
  if (level === 'error' || level === 'warning') console.error(`graphile ${level}:`, message)
}

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
