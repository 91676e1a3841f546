<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Illuminate\Redis\Connections\PredisClusterConnection as Laravel;

/** Laravel's Predis cluster connection, its `throttle()` and `funnel()` on Goblin. */
class PredisClusterConnection extends Laravel
{
    use GoblinLimiters;
}
