// Drives each example app over HTTP against a server with Goblin (GOBLIN_TEST_SERVER), as a
// user would: each app started as its own process on a free port, its limits run into, its
// headers read. tests/node_limits.rs runs this on every server.
import { strict as assert } from 'node:assert'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const here = (file) => fileURLToPath(new URL(file, import.meta.url))
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts `file` with `env`; its URL once it listens, and a stop. */
async function start(file, env = {}) {
  const child = spawn(process.execPath, [here(file)], {
    env: { ...process.env, REDIS_URL: `redis://${process.env.GOBLIN_TEST_SERVER}`, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  for await (const chunk of child.stdout) {
    output += chunk
    const match = /listening on (http:\/\/\S+)/.exec(output)
    if (match) {
      return { url: match[1].replace('[::1]', '127.0.0.1'), stop: async () => { child.kill(); await once(child, 'exit') } }
    }
  }
  throw new Error(`${file} exited before it listened:\n${output}`)
}

describe('examples/node/express-app.mjs', () => {
  it('limits the API to 5 a minute with the draft-8 headers, slows log-ins down, builds one report at a time', async () => {
    const { url, stop } = await start('express-app.mjs')
    try {
      for (let left = 4; left >= 0; left--) {
        const res = await fetch(`${url}/api/hello`)
        assert.equal(res.status, 200)
        assert.match(res.headers.get('ratelimit'), new RegExp(`^"5-in-1min"; r=${left}; t=(60|59)$`))
      }
      const refused = await fetch(`${url}/api/hello`)
      assert.equal(refused.status, 429)
      assert.ok(Number(refused.headers.get('retry-after')) >= 59)
      const times = []
      for (let i = 0; i < 4; i++) {
        const started = performance.now()
        assert.equal((await fetch(`${url}/login`, { method: 'POST' })).status, 200)
        times.push(performance.now() - started)
      }
      assert.ok(times[0] < 200 && times[1] < 200 && times[2] >= 240 && times[3] >= 490, `log-in times ${times}`)
      const reports = await Promise.all([1, 2, 3].map(() => fetch(`${url}/report`).then((res) => res.text())))
      assert.equal(new Set(reports).size, 3)
    } finally {
      await stop()
    }
  })
})

describe('examples/node/fastify-app.mjs', () => {
  it('limits with the plugin\'s Redis store on Goblin: continueExceeding keeps refusing, exponentialBackoff doubles', async () => {
    const { url, stop } = await start('fastify-app.mjs')
    try {
      for (let left = 4; left >= 0; left--) {
        const res = await fetch(`${url}/`)
        assert.deepEqual([res.status, res.headers.get('x-ratelimit-remaining')], [200, String(left)])
      }
      assert.equal((await fetch(`${url}/`)).status, 429)
      for (let i = 0; i < 3; i++) {
        assert.equal((await fetch(`${url}/search`)).status, 200)
      }
      for (let i = 0; i < 3; i++) {
        assert.equal((await fetch(`${url}/search`)).status, 429) // each one starts the second again
        await sleep(600)
      }
      await sleep(500)
      assert.equal((await fetch(`${url}/search`)).status, 200)
      const retries = []
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${url}/login`)
        retries.push(res.status === 429 ? Number(res.headers.get('retry-after')) : res.status)
      }
      assert.deepEqual(retries, [200, 200, 1, 2, 4])
    } finally {
      await stop()
    }
  })
})

for (const adapter of ['express', 'fastify']) {
  describe(`examples/node/nest-app.mjs on the ${adapter} adapter`, () => {
    it('throttles per second and per minute, all or nothing: a request refused is counted by neither', async () => {
      const { url, stop } = await start('nest-app.mjs', { NEST_ADAPTER: adapter })
      try {
        await sleep(1100) // a second of its own (the apps on both adapters share the keys)
        const minute = []
        for (let left = 2; left >= 0; left--) {
          const res = await fetch(`${url}/`)
          assert.deepEqual([res.status, res.headers.get('x-ratelimit-remaining-second')], [200, String(left)])
          minute.push(Number(res.headers.get('x-ratelimit-remaining-minute')))
        }
        const refused = await fetch(`${url}/`)
        assert.deepEqual([refused.status, refused.headers.get('retry-after-second')], [429, '1'])
        await sleep(1100)
        const res = await fetch(`${url}/`)
        assert.equal(res.status, 200)
        assert.equal(Number(res.headers.get('x-ratelimit-remaining-minute')), minute[2] - 1, 'the refused request was counted')
      } finally {
        await stop()
      }
    })
  })
}
