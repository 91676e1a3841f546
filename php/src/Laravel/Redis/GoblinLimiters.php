<?php

declare(strict_types=1);

namespace Goblin\Laravel\Redis;

use Goblin\Laravel\Limiters\ConcurrencyLimiterBuilder;
use Goblin\Laravel\Limiters\DurationLimiterBuilder;

/** `Redis::throttle()` and `Redis::funnel()` on Goblin's limiters, for a connection that uses it. */
trait GoblinLimiters
{
    /**
     * @param string $name
     *
     * @return ConcurrencyLimiterBuilder
     */
    public function funnel($name)
    {
        return new ConcurrencyLimiterBuilder($this, $name);
    }

    /**
     * @param string $name
     *
     * @return DurationLimiterBuilder
     */
    public function throttle($name)
    {
        return new DurationLimiterBuilder($this, $name);
    }
}
