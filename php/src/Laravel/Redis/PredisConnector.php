<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Illuminate\Redis\Connectors\PredisConnector as Laravel;

/** Laravel's Predis connector, whose connections are Goblin's. */
class PredisConnector extends Laravel
{
    public function connect(array $config, array $options)
    {
        return new PredisConnection(parent::connect($config, $options)->client());
    }

    public function connectToCluster(array $config, array $clusterOptions, array $options)
    {
        return new PredisClusterConnection(parent::connectToCluster($config, $clusterOptions, $options)->client());
    }
}
