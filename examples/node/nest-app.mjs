// A NestJS app on Goblin: @nestjs/throttler with goblin-redis's storage (every hit one
// GOBLIN.FWINDOW, no script) and its guard, which decides the named throttlers together, all
// or nothing (one GOBLIN.MFWINDOW): a request the per-second limit refuses is not counted by the
// per-minute one. On the Express adapter, or on Fastify's with NEST_ADAPTER=fastify.
//
//   REDIS_URL=redis://127.0.0.1:6379 PORT=3000 node examples/node/nest-app.mjs
//
// Plain JavaScript: each decorator is applied by hand, as TypeScript applies `@Controller()`,
// `@Get()` and `@Module({...})`.
import 'reflect-metadata'
import { Controller, Get, Module } from '@nestjs/common'
import { APP_GUARD, NestFactory } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { ThrottlerModule, seconds, minutes } from '@nestjs/throttler'
import Redis from 'ioredis'
import { GoblinThrottlerGuard, GoblinThrottlerStorage } from 'goblin-redis/nest'

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')

class AppController {
  hello() {
    return 'hello\n'
  }
}
Controller()(AppController)
Get()(AppController.prototype, 'hello', Object.getOwnPropertyDescriptor(AppController.prototype, 'hello'))

class AppModule {}
Module({
  imports: [
    ThrottlerModule.forRoot({
      throttlers: [
        { name: 'second', ttl: seconds(1), limit: 3 },
        { name: 'minute', ttl: minutes(1), limit: 20 },
      ],
      storage: new GoblinThrottlerStorage(redis),
    }),
  ],
  controllers: [AppController],
  providers: [{ provide: APP_GUARD, useClass: GoblinThrottlerGuard }],
})(AppModule)

const adapter = process.env.NEST_ADAPTER === 'fastify' ? new FastifyAdapter() : new ExpressAdapter()
const app = await NestFactory.create(AppModule, adapter, { logger: false })
await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
console.log(`listening on ${await app.getUrl()}`)
