<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Illuminate\Redis\Connections\PhpRedisClusterConnection as Laravel;
use Illuminate\Redis\Connections\PhpRedisConnection as LaravelPhpRedis;

/** Laravel's phpredis cluster connection, its `throttle()` and `funnel()` on Goblin. */
class PhpRedisClusterConnection extends Laravel
{
    use GoblinLimiters;

    public static function adopt(LaravelPhpRedis $connection): static
    {
        return new static($connection->client, $connection->connector, $connection->config);
    }
}
