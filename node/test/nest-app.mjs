// A NestJS app for the tests: one route, `GET /`, throttled by `throttlers` with `guard`, its
// storage a GoblinThrottlerStorage on `client` (under a fresh prefix), on `adapter`, listening on
// a free loopback port.
import 'reflect-metadata'
import { Controller, Get, Module } from '@nestjs/common'
import { APP_GUARD, NestFactory } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { ThrottlerModule } from '@nestjs/throttler'
import { GoblinThrottlerStorage } from 'goblin-redis/nest'
import { freshKey } from './helpers.mjs'

/** Each adapter, by name. */
export const ADAPTERS = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
]

export async function nestApp(client, adapter, throttlers, guard) {
  // The decorators, applied as TypeScript's emit applies them.
  const controller = Reflect.decorate([Controller()], class {})
  const handler = Object.getOwnPropertyDescriptor({ hello: () => 'ok' }, 'hello')
  Object.defineProperty(controller.prototype, 'hello', Reflect.decorate([Get()], controller.prototype, 'hello', handler))
  const storage = new GoblinThrottlerStorage(client, { prefix: `${freshKey('nest')}:` })
  const module = { imports: [ThrottlerModule.forRoot({ throttlers, storage })], controllers: [controller], providers: [{ provide: APP_GUARD, useClass: guard }] }
  const AppModule = Reflect.decorate([Module(module)], class {})
  const application = await NestFactory.create(AppModule, adapter, { logger: false })
  await application.listen(0, '127.0.0.1')
  return { application, url: await application.getUrl() }
}
