<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Illuminate\Redis\Connections\PhpRedisConnection as Laravel;

/** Laravel's phpredis connection, its `throttle()` and `funnel()` on Goblin. */
class PhpRedisConnection extends Laravel
{
    use GoblinLimiters;

    /** The same connection (client, reconnecting closure, configuration), as a Goblin one. */
    public static function adopt(Laravel $connection): static
    {
        return new static($connection->client, $connection->connector, $connection->config);
    }
}
