<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Illuminate\Redis\Connectors\PhpRedisConnector as Laravel;

/** Laravel's phpredis connector, whose connections are Goblin's. */
class PhpRedisConnector extends Laravel
{
    public function connect(array $config, array $options)
    {
        return PhpRedisConnection::adopt(parent::connect($config, $options));
    }

    public function connectToCluster(array $config, array $clusterOptions, array $options)
    {
        return PhpRedisClusterConnection::adopt(parent::connectToCluster($config, $clusterOptions, $options));
    }
}
