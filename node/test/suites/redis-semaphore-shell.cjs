// A `--require` for redis-semaphore 5.7.0's `[Node shutdown]` tests (its test files unmodified),
// after redis-semaphore.cjs: its `test/shell.ts`, which stops and starts its three servers with
// docker compose and `yarn wait-for`, is replaced in the require cache by servers of this
// process's own, each with the module loaded, on free ports (the tests' REDIS_URI1 to 3):
//
// - `downRedisServer(n)`: SIGTERM to server n's process, as `docker compose stop` sends it;
//   resolves once that process has exited (its own exit event, no polling of the port);
// - `upRedisServer(n)`: starts server n again on its port (nothing if it runs), with no data, as
//   a container comes back; resolves once that very process answers (`INFO`'s process_id) and
//   the tests' own client (named client<n>) is back in its CLIENT LIST.
//
// The servers are started here, before the test files read REDIS_URI1 to 3 (a server that cannot
// have the port picked, taken meanwhile by another process, is started again on another), and
// each is stopped by its pid when the process exits, pass or fail; GOBLIN_RSEM_PIDS lists the
// pids of those running, so that the driver stops any a killed run left behind.
// GOBLIN_RSEM_SERVER is the server binary, GOBLIN_MODULE the module, GOBLIN_RSEM_SCRATCH a
// directory for the servers' files.
'use strict'
const path = require('node:path')
const fs = require('node:fs')
const net = require('node:net')
const Module = require('node:module')
const { execFileSync, spawn } = require('node:child_process')
const { once } = require('node:events')

const binary = required('GOBLIN_RSEM_SERVER')
const modulePath = required('GOBLIN_MODULE')
const scratch = required('GOBLIN_RSEM_SCRATCH')
const pidFile = required('GOBLIN_RSEM_PIDS')

function required(name) {
  const value = process.env[name]
  if (!value) {
    throw new Error(`${name} must be set (tests/node_suites.rs sets it)`)
  }
  return value
}

/** The running server of each number (1 to 3): its child process, or undefined while it is down. */
const running = new Map()

function log(text) {
  console.log(`[goblin shell] ${text}`)
}

/** One command on a fresh connection: its bulk reply's text, or undefined if the server did not answer. */
function ask(port, ...args) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let text = ''
    // A probe, asked again: one left unanswered (not this server on the port) is given up.
    socket.setTimeout(1000, () => {
      socket.destroy()
      resolve(undefined)
    })
    socket.on('connect', () => socket.write(`*${args.length}\r\n${args.map((arg) => `$${arg.length}\r\n${arg}\r\n`).join('')}`))
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1')
      if (/^\$(\d+)\r\n/.test(text) && text.length >= Number(/^\$(\d+)/.exec(text)[1]) + 7) {
        socket.destroy()
        resolve(text)
      }
    })
    socket.on('error', () => resolve(undefined))
    socket.on('close', () => resolve(text || undefined))
  })
}

/** Server `num` started on `port`: its child process, noted as running. */
function spawnServer(num, port) {
  const dir = path.join(scratch, `server${num}`)
  fs.mkdirSync(dir, { recursive: true })
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', 'server.log', '--loadmodule', modulePath],
    { stdio: 'ignore' },
  )
  running.set(num, child)
  notePids()
  return child
}

/** GOBLIN_RSEM_PIDS: the pids of the servers running now. */
function notePids() {
  fs.writeFileSync(pidFile, [...running.values()].map((child) => `${child.pid}\n`).join(''))
}

async function upRedisServer(num) {
  if (running.has(num)) {
    return
  }
  const port = ports[num - 1]
  const dir = path.join(scratch, `server${num}`)
  const child = spawnServer(num, port)
  const exited = once(child, 'exit')
  // Ready once this very process answers, having loaded its (empty) data.
  for (;;) {
    const text = await Promise.race([ask(port, 'INFO'), exited.then(() => 'exited')])
    if (text === 'exited') {
      running.delete(num)
      notePids()
      throw new Error(`server ${num} exited while starting (see ${dir}/server.log)`)
    }
    if (text !== undefined && text.includes(`process_id:${child.pid}\r\n`) && text.includes('loading:0\r\n')) {
      break
    }
    await sleep(20)
  }
  log(`server ${num} (pid ${child.pid}) up on ${port}`)
  child.unref() // a running server does not keep the tests' process alive (it is killed at exit)
  // As `yarn wait-for` and a container's start take a while, the tests' own client (named
  // client<n>) has reconnected by the time they go on: wait for that, seen by the server.
  while (!(await ask(port, 'CLIENT', 'LIST'))?.includes(`name=client${num} `)) {
    await sleep(20)
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function downRedisServer(num) {
  const child = running.get(num)
  if (child === undefined) {
    return
  }
  const exited = child.exitCode === null && child.signalCode === null ? once(child, 'exit') : Promise.resolve()
  child.ref()
  process.kill(child.pid, 'SIGTERM')
  await exited
  running.delete(num)
  notePids()
  log(`server ${num} (pid ${child.pid}) stopped`)
}

process.on('exit', () => {
  for (const child of running.values()) {
    try {
      process.kill(child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

// The first start, before the test files load: blocking, a probe in a process of its own asks
// until this very server answers, or its process is gone (it could not have the port).
const PROBE = `
const net = require('node:net')
const fs = require('node:fs')
const [port, pid] = process.argv.slice(1).map(Number)
const gone = () => { try { return fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1][0] === 'Z' } catch { return true } }
const ask = () => new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1')
  let text = ''
  socket.setTimeout(1000, () => { socket.destroy(); resolve('') })
  socket.on('connect', () => socket.write('*1\\r\\n$4\\r\\nINFO\\r\\n'))
  socket.on('data', (chunk) => { text += chunk; if (text.includes('loading:')) { socket.destroy(); resolve(text) } })
  socket.on('error', () => resolve(''))
  socket.on('close', () => resolve(text))
})
;(async () => {
  for (;;) {
    const text = await ask()
    if (text.includes('process_id:' + pid + '\\r\\n') && text.includes('loading:0\\r\\n')) process.exit(0)
    if (gone()) process.exit(2)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
})()
`
const FREE_PORT = "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close() })"

const ports = []
for (const num of [1, 2, 3]) {
  for (let attempt = 1; ; attempt++) {
    const port = Number(execFileSync(process.execPath, ['-e', FREE_PORT]).toString())
    const child = spawnServer(num, port)
    try {
      execFileSync(process.execPath, ['-e', PROBE, String(port), String(child.pid)], { stdio: 'ignore', timeout: 30_000 })
      child.unref()
      ports.push(port)
      process.env[`REDIS_URI${num}`] = `redis://127.0.0.1:${port}`
      log(`server ${num} (pid ${child.pid}) up on ${port}`)
      break
    } catch (error) {
      try {
        process.kill(child.pid, 'SIGKILL')
      } catch {
        // gone already
      }
      running.delete(num)
      notePids()
      if (attempt === 5) {
        throw new Error(`server ${num} did not start (see ${scratch}/server${num}/server.log)`, { cause: error })
      }
    }
  }
}

const shell = path.join(process.env.GOBLIN_RSEM_DIR ?? process.cwd(), 'test', 'shell.ts')
const stand = new Module(shell)
stand.filename = shell
stand.loaded = true
stand.exports = { __esModule: true, upRedisServer, downRedisServer }
require.cache[shell] = stand
