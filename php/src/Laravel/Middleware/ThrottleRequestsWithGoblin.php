<?php

declare(strict_types=1);

namespace Goblin\Laravel\Middleware;

use Goblin\Laravel\Limiters\DurationLimiter;
use Illuminate\Routing\Middleware\ThrottleRequestsWithRedis;

/**
 * Laravel's `ThrottleRequestsWithRedis` on Goblin's DurationLimiter: the same middleware
 * (`throttle:60,1`, named limiters, the `X-RateLimit-*` and `Retry-After` headers), each
 * request's decision one GOBLIN.FWINDOW. The service provider makes it what the container gives
 * for `ThrottleRequestsWithRedis`, so an application whose `throttle` alias names that class
 * runs on Goblin.
 */
class ThrottleRequestsWithGoblin extends ThrottleRequestsWithRedis
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
        $this->remaining[$key] = $limiter->remaining;

        return $refused;
    }
}
