<?php

declare(strict_types=1);

namespace Goblin\Laravel\Limiters;

use Goblin\Client;
use Goblin\Commands;
use Goblin\Laravel\Clients;
use Illuminate\Contracts\Redis\LimiterTimeoutException;

/**
 * Laravel's `Illuminate\Redis\Limiters\DurationLimiter` on Goblin: the same constructor, public
 * properties and methods, deciding as it does (a fixed window of `$decay` seconds, armed by its
 * first hit, in which at most `$maxLocks` pass; every attempt counts), each decision one
 * command instead of a script: `acquire()` is GOBLIN.FWINDOW, `tooManyAttempts()`
 * GOBLIN.FWSTATS, on the server's clock.
 *
 * `block()` does not poll every 750 ms: a refused attempt's reply says when its window ends, so
 * it sleeps once until then and asks again, and gives up at once when the window outlasts the
 * timeout.
 *
 * A window of `$decay` seconds is half-open on the server's clock: armed by its first attempt,
 * it ends `$decay` seconds later, at the millisecond its key expires, and an attempt then is the
 * next window's. So an attempt made `$decay` seconds after the first always passes (Laravel's
 * own script compares this machine's clock with a window that starts at a whole second).
 */
class DurationLimiter
{
    /**
     * The end of the current window, a Unix timestamp in seconds (rounded up).
     *
     * @var int|null
     */
    public $decaysAt;

    /**
     * How many attempts the current window has left.
     *
     * @var int|null
     */
    public $remaining;

    /** Milliseconds until the window ends, from the last attempt's reply. */
    private int $ttl = 0;

    /**
     * @param mixed  $redis    a Redis connection, the Redis manager (its default connection), or a client
     * @param string $name     the limiter's key (prefixed as the connection prefixes keys)
     * @param int    $maxLocks the attempts a window lets pass
     * @param int    $decay    the window, in seconds
     */
    public function __construct(private $redis, private $name, private $maxLocks, private $decay)
    {
    }

    /**
     * Attempts to pass, waiting up to `$timeout` seconds for the window to end; then runs
     * `$callback`, if given, and returns its result (true without one).
     *
     * @param int           $timeout
     * @param callable|null $callback
     *
     * @throws LimiterTimeoutException the window outlasts the timeout
     */
    public function block($timeout, $callback = null)
    {
        $deadline = microtime(true) + max(0, (float) $timeout);
        while (!$this->acquire()) {
            // A window ends at the millisecond its key expires (GOBLIN.FWINDOW counts no call
            // there), the reply's TTL from when the server read its clock, before the reply
            // came: an attempt that TTL after the reply meets the next window.
            $wait = $this->ttl / 1000;
            if ($this->ttl < 0 || microtime(true) + $wait > $deadline) {
                throw new LimiterTimeoutException();
            }
            usleep((int) ceil($wait * 1e6));
        }

        return \is_callable($callback) ? $callback() : true;
    }

    /**
     * One attempt (GOBLIN.FWINDOW): whether it passes; counted either way, as Laravel counts it.
     *
     * @return bool
     */
    public function acquire()
    {
        [$count, $this->ttl] = Commands::fixedWindow($this->client(), (string) $this->name, $this->window());
        $this->decaysAt = $this->endsAt($this->ttl);
        $this->remaining = max(0, (int) $this->maxLocks - $count);

        return $count <= (int) $this->maxLocks;
    }

    /**
     * Whether the window is spent, without counting an attempt (GOBLIN.FWSTATS).
     *
     * @return bool
     */
    public function tooManyAttempts()
    {
        [$count, $ttl] = Commands::fixedWindowStats($this->client(), (string) $this->name);
        $this->decaysAt = $this->endsAt($ttl);
        $this->remaining = (int) $this->maxLocks - $count;

        return $this->remaining <= 0;
    }

    /**
     * Clears the limiter: a new window starts at the next attempt.
     *
     * @return void
     */
    public function clear()
    {
        Commands::delete($this->client(), (string) $this->name);
    }

    private function client(): Client
    {
        return Clients::of($this->redis);
    }

    private function window(): int
    {
        return (int) $this->decay * 1000;
    }

    /** A window's end from its TTL: now when it has none (no window, or one without a TTL). */
    private function endsAt(int $ttl): int
    {
        return time() + ($ttl > 0 ? (int) ceil($ttl / 1000) : 0);
    }
}
