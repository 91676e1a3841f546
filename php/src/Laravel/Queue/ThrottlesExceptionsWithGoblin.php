<?php

declare(strict_types=1);

namespace Goblin\Laravel\Queue;

use Goblin\Laravel\Limiters\DurationLimiter;
use Illuminate\Container\Container;
use Illuminate\Contracts\Redis\Factory as Redis;
use Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis;

/**
 * Laravel's `ThrottlesExceptionsWithRedis` job middleware (a circuit breaker: after
 * `$maxAttempts` failures in `$decayMinutes`, the job is put back until the window ends) on
 * Goblin's DurationLimiter: GOBLIN.FWSTATS to read the circuit, GOBLIN.FWINDOW to count a
 * failure, `DEL` to close it after a success.
 */
class ThrottlesExceptionsWithGoblin extends ThrottlesExceptionsWithRedis
{
    /**
     * @param mixed    $job
     * @param callable $next
     *
     * @return mixed
     */
    public function handle($job, $next)
    {
        $this->redis = Container::getInstance()->make(Redis::class);
        $this->limiter = new DurationLimiter($this->redis, $this->getKey($job), $this->maxAttempts, $this->decayMinutes * 60);

        if ($this->limiter->tooManyAttempts()) {
            return $job->release($this->limiter->decaysAt - $this->currentTime());
        }

        try {
            $next($job);
            $this->limiter->clear();
        } catch (\Throwable $throwable) {
            if ($this->whenCallback && !\call_user_func($this->whenCallback, $throwable)) {
                throw $throwable;
            }
            $this->limiter->acquire();

            return $job->release($this->retryAfterMinutes * 60);
        }
    }
}
