<?php

declare(strict_types=1);

namespace Goblin\Laravel\Limiters;

use Goblin\Client;
use Goblin\Commands;
use Goblin\Laravel\Clients;
use Illuminate\Contracts\Redis\LimiterTimeoutException;
use Illuminate\Support\Str;

/**
 * Laravel's `Illuminate\Redis\Limiters\ConcurrencyLimiter` on Goblin: the same constructor,
 * protected properties and methods (`acquire($id)`, `release($key, $id)`), so a subclass of it
 * still works. At most `$maxLocks` callers hold a slot at once, each for `$releaseAfter`
 * seconds at most, on the server's clock: the slots are leases of a GOBLIN.ZWINDOW window of
 * `$releaseAfter` seconds and limit `$maxLocks`, in one sorted set named `$name`.
 *
 * `block()` waits in line inside the server (GOBLIN.BZWINDOW), first come, first served, and is
 * granted the moment a slot frees (a release, or a lease that ran out), instead of trying every
 * 250 ms.
 */
class ConcurrencyLimiter
{
    /**
     * @param mixed  $redis        a Redis connection, the Redis manager (its default connection), or a client
     * @param string $name         the limiter's key (prefixed as the connection prefixes keys)
     * @param int    $maxLocks     how many may hold a slot at once
     * @param int    $releaseAfter the longest a slot is held, in seconds
     */
    public function __construct(protected $redis, protected $name, protected $maxLocks, protected $releaseAfter)
    {
    }

    /**
     * Takes a slot, waiting in line up to `$timeout` seconds for one; then runs `$callback`, if
     * given, gives the slot back and returns the callback's result (true without one, the slot
     * kept until its lease ends).
     *
     * @param int           $timeout
     * @param callable|null $callback
     *
     * @throws LimiterTimeoutException no slot within the timeout
     * @throws \Throwable              what the callback throws, once the slot is given back
     */
    public function block($timeout, $callback = null)
    {
        $id = Str::random(20);
        $slot = $this->acquire($id);
        if (!$slot && $timeout > 0) {
            $slot = $this->acquireInLine($id, (float) $timeout);
        }
        if (!$slot) {
            throw new LimiterTimeoutException();
        }
        if (\is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release($slot, $id);
            }
        }

        return true;
    }

    /**
     * One attempt, without waiting (GOBLIN.ZWINDOW): the slot's key, or false.
     *
     * @param string $id a unique identifier for this holder
     *
     * @return mixed
     */
    protected function acquire($id)
    {
        return Commands::lease($this->client(), (string) $this->name, (float) $this->releaseAfter, (int) $this->maxLocks, (string) $id)
            ? $this->name
            : false;
    }

    /**
     * Waits in line for a slot (GOBLIN.BZWINDOW) up to `$timeout` seconds: its key, or false.
     *
     * @return mixed
     */
    protected function acquireInLine(string $id, float $timeout)
    {
        return Commands::waitForLease($this->client(), (string) $this->name, (float) $this->releaseAfter, (int) $this->maxLocks, $id, $timeout)
            ? $this->name
            : false;
    }

    /**
     * Gives the slot back (GOBLIN.CAD), if `$id` still holds it.
     *
     * @param string $key
     * @param string $id
     *
     * @return void
     */
    protected function release($key, $id)
    {
        Commands::cad($this->client(), (string) $key, (string) $id);
    }

    private function client(): Client
    {
        return Clients::of($this->redis);
    }
}
