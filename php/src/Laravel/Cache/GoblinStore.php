<?php

declare(strict_types=1);

namespace Goblin\Laravel\Cache;

use Illuminate\Cache\RedisStore;
use Illuminate\Redis\Connections\PhpRedisConnection;

/**
 * The `goblin` cache store: Laravel's Redis cache store, whose locks are Goblin's
 * (`Cache::store('goblin')->lock($name, $seconds)`): same keys, same prefixes, same lock
 * connection.
 */
class GoblinStore extends RedisStore
{
    /**
     * @param string      $name
     * @param int         $seconds
     * @param string|null $owner
     *
     * @return RedisLock
     */
    public function lock($name, $seconds = 0, $owner = null)
    {
        $connection = $this->lockConnection();
        $name = $this->prefix . $name;

        return $connection instanceof PhpRedisConnection
            ? new PhpRedisLock($connection, $name, $seconds, $owner)
            : new RedisLock($connection, $name, $seconds, $owner);
    }
}
