<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Illuminate\Redis\Connections\PredisConnection as Laravel;

/** Laravel's Predis connection, its `throttle()` and `funnel()` on Goblin. */
class PredisConnection extends Laravel
{
    use GoblinLimiters;
}
