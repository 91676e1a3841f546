<?php

declare(strict_types=1);

namespace Goblin\Laravel\Queue;

use Goblin\Laravel\Limiters\DurationLimiter;
use Illuminate\Queue\Middleware\RateLimitedWithRedis;

/**
 * Laravel's `RateLimitedWithRedis` job middleware on Goblin's DurationLimiter: the same named
 * limiters (`RateLimiter::for()`), releases and `dontRelease()`, each decision one
 * GOBLIN.FWINDOW. A job's `middleware()` returns `new RateLimitedWithGoblin('name')`.
 */
class RateLimitedWithGoblin extends RateLimitedWithRedis
{
    /**
     * @param string    $key
     * @param int       $maxAttempts
     * @param int|float $decayMinutes
     *
     * @return bool
     */
    protected function tooManyAttempts($key, $maxAttempts, $decayMinutes)
    {
        $limiter = new DurationLimiter($this->redis, $key, $maxAttempts, (int) round($decayMinutes * 60));
        $refused = !$limiter->acquire();
        $this->decaysAt[$key] = $limiter->decaysAt;

        return $refused;
    }
}
