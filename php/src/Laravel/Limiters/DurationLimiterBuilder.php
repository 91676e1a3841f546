<?php

declare(strict_types=1);

namespace Goblin\Laravel\Limiters;

use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Redis\Limiters\DurationLimiterBuilder as LaravelBuilder;

/** What `Redis::throttle($name)` builds on a Goblin connection: Laravel's builder, on Goblin's DurationLimiter. */
class DurationLimiterBuilder extends LaravelBuilder
{
    public function then(callable $callback, callable $failure = null)
    {
        try {
            return (new DurationLimiter($this->connection, $this->name, $this->maxLocks, $this->decay))
                ->block($this->timeout, $callback);
        } catch (LimiterTimeoutException $e) {
            if ($failure) {
                return $failure($e);
            }

            throw $e;
        }
    }
}
