<?php

declare(strict_types=1);

namespace Goblin\Laravel\Cache;

use Illuminate\Redis\Connections\PhpRedisConnection;

/**
 * Laravel's `Illuminate\Cache\PhpRedisLock` on Goblin: the lock of a phpredis connection, with
 * its constructor's types. Goblin's commands send the owner as it is, never serialized or
 * compressed, so acquire and release agree whatever the connection's serializer.
 */
class PhpRedisLock extends RedisLock
{
    public function __construct(PhpRedisConnection $redis, string $name, int $seconds, ?string $owner = null)
    {
        parent::__construct($redis, $name, $seconds, $owner);
    }
}
