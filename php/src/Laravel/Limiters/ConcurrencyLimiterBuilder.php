<?php

declare(strict_types=1);

namespace Goblin\Laravel\Limiters;

use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Redis\Limiters\ConcurrencyLimiterBuilder as LaravelBuilder;

/** What `Redis::funnel($name)` builds on a Goblin connection: Laravel's builder, on Goblin's ConcurrencyLimiter. */
class ConcurrencyLimiterBuilder extends LaravelBuilder
{
    public function then(callable $callback, callable $failure = null)
    {
        try {
            return (new ConcurrencyLimiter($this->connection, $this->name, $this->maxLocks, $this->releaseAfter))
                ->block($this->timeout, $callback);
        } catch (LimiterTimeoutException $e) {
            if ($failure) {
                return $failure($e);
            }

            throw $e;
        }
    }
}
