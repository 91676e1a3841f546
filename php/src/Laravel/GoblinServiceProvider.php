<?php

declare(strict_types=1);

namespace Goblin\Laravel;

use Goblin\Laravel\Cache\GoblinStore;
use Goblin\Laravel\Middleware\ThrottleRequestsWithGoblin;
use Goblin\Laravel\Redis\PhpRedisConnector;
use Goblin\Laravel\Redis\PredisConnector;
use Illuminate\Cache\CacheManager;
use Illuminate\Contracts\Foundation\Application;
use Illuminate\Redis\RedisManager;
use Illuminate\Routing\Middleware\ThrottleRequestsWithRedis;
use Illuminate\Support\ServiceProvider;

/**
 * Goblin beneath Laravel (discovered from composer.json's `extra.laravel`):
 *
 * - `Redis::throttle()` and `Redis::funnel()` build Goblin's DurationLimiter and
 *   ConcurrencyLimiter: the `phpredis` and `predis` clients' connections are Goblin's (Laravel's,
 *   with those two methods on Goblin; everything else theirs);
 * - a `goblin` cache driver: Laravel's Redis cache store, its locks Goblin's
 *   (`'goblin' => ['driver' => 'goblin', 'connection' => 'cache', 'lock_connection' => 'default']`
 *   in config/cache.php, then `Cache::store('goblin')->lock('report', 30)->block(5)`);
 * - `ThrottleRequestsWithRedis` is resolved as Goblin's ThrottleRequestsWithGoblin, so the
 *   `throttle` route middleware runs on Goblin wherever the kernel names the Redis one.
 *
 * `config('goblin.redis')` false leaves the Redis connections as Laravel makes them, and
 * `config('goblin.throttle_requests')` false leaves the HTTP middleware.
 */
class GoblinServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->callAfterResolving('redis', function (RedisManager $redis, Application $app): void {
            if (false === $app->make('config')->get('goblin.redis', true)) {
                return;
            }
            // Not static: the manager binds each creator to itself.
            $redis->extend('phpredis', fn (): PhpRedisConnector => new PhpRedisConnector());
            $redis->extend('predis', fn (): PredisConnector => new PredisConnector());
        });

        $this->callAfterResolving('cache', function (CacheManager $cache): void {
            // Not static: the manager binds each creator to itself.
            $cache->extend('goblin', function (Application $app, array $config) use ($cache) {
                $connection = $config['connection'] ?? 'default';
                $store = new GoblinStore($app->make('redis'), $config['prefix'] ?? $app->make('config')->get('cache.prefix'), $connection);

                return $cache->repository($store->setLockConnection($config['lock_connection'] ?? $connection));
            });
        });

        if (false !== $this->app->make('config')->get('goblin.throttle_requests', true)) {
            $this->app->bind(ThrottleRequestsWithRedis::class, ThrottleRequestsWithGoblin::class);
        }
    }
}
