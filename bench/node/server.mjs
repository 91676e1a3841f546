// What bench/node's two parts share: a server of their own on a free loopback port with the
// module (stopped by its pid when the run ends), its commandstats and CPU, and the arguments.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Redis from 'ioredis'

/** `--module PATH --server "Label=PATH" ... [--quick] [--out FILE]`. */
export function parseArguments(argv) {
  const options = { servers: [], quick: false, module: undefined, out: undefined }
  for (let i = 0; i < argv.length; i++) {
    const [name, value] = [argv[i], argv[i + 1]]
    if (name === '--module') {
      options.module = value
      i++
    } else if (name === '--server') {
      const at = value.indexOf('=')
      options.servers.push({ label: value.slice(0, at), binary: value.slice(at + 1) })
      i++
    } else if (name === '--out') {
      options.out = value
      i++
    } else if (name === '--quick') {
      options.quick = true
    } else {
      throw new Error(`unknown argument ${name}`)
    }
  }
  if (!options.module || options.servers.length === 0) {
    throw new Error('usage: --module PATH --server "Label=PATH" ... [--quick] [--out FILE]')
  }
  return options
}

async function freePort() {
  const probe = createServer()
  probe.listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address()
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/** A server with the module; `stop()` ends it by its pid. */
export async function startServer(binary, module) {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'goblin-bench-node-'))
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--loadmodule', module], {
    stdio: 'ignore',
  })
  let admin
  for (let i = 0; !admin; i++) {
    const attempt = new Redis({ port, lazyConnect: true, retryStrategy: null, maxRetriesPerRequest: 0 })
    attempt.on('error', () => {})
    try {
      await attempt.connect()
      await attempt.ping()
      admin = attempt
    } catch (error) {
      attempt.disconnect()
      if (i > 200) {
        throw error
      }
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const info = await admin.info('server')
  const version = (/valkey_version:(\S+)/.exec(info) ?? /redis_version:(\S+)/.exec(info))[1]
  return {
    port,
    admin,
    version,
    async stop() {
      admin.disconnect()
      child.kill('SIGKILL')
      await once(child, 'exit')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** `INFO commandstats`: calls and usec by command. */
export async function commandStats(admin) {
  const stats = {}
  for (const line of (await admin.info('commandstats')).split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim())
    if (match) {
      stats[match[1]] = { calls: Number(match[2]), usec: Number(match[3]) }
    }
  }
  return stats
}

/** The server's CPU (user + sys) in seconds. */
export async function serverCpu(admin) {
  const info = await admin.info('cpu')
  const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)[1])
  return field('used_cpu_user') + field('used_cpu_sys')
}

export function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
