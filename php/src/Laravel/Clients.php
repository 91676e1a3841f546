<?php

declare(strict_types=1);

namespace Goblin\Laravel;

use Goblin\Client;
use Illuminate\Contracts\Redis\Factory;
use Illuminate\Redis\Connections\Connection;

/**
 * The Goblin client under what Laravel hands a limiter or a lock: a connection (its client, as
 * it is now: a phpredis connection that reconnects makes a new one), the Redis manager (its
 * default connection), or a client itself.
 */
final class Clients
{
    private function __construct()
    {
    }

    public static function of(mixed $redis): Client
    {
        if ($redis instanceof Factory) {
            $redis = $redis->connection();
        }
        if ($redis instanceof Connection) {
            $redis = $redis->client();
        }
        if (!\is_object($redis)) {
            throw new \InvalidArgumentException(sprintf('a Redis connection, not %s', get_debug_type($redis)));
        }

        return Client::of($redis);
    }
}
