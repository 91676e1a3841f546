<?php

declare(strict_types=1);

namespace Goblin\Laravel\Cache;

use Goblin\Client;
use Goblin\Commands;
use Goblin\Laravel\Clients;
use Illuminate\Cache\Lock;
use Illuminate\Contracts\Cache\LockTimeoutException;

/**
 * Laravel's `Illuminate\Cache\RedisLock` on Goblin: the same constructor and methods, the same
 * key (the lock's name, prefixed as the connection prefixes keys, holding the owner with a
 * lease of `$seconds`, or none for 0), each operation one command with no script:
 *
 * | Laravel calls          | Goblin runs                                   |
 * |------------------------|-----------------------------------------------|
 * | `acquire()`, `get()`   | `GOBLIN.LOCK name owner ms`                   |
 * | `block($seconds)`      | `GOBLIN.BLOCK name owner ms timeout`          |
 * | `release()`            | `GOBLIN.CAD name owner`                       |
 * | `forceRelease()`       | `DEL name`                                    |
 *
 * `block()` waits in line inside the server, first come, first served, and is granted the
 * moment the lock is released or its lease ends, instead of trying every 250 ms
 * (`betweenBlockedAttemptsSleepFor()` is accepted, and has nothing to set). The owner is
 * written as it is, never serialized or compressed by the connection's options.
 */
class RedisLock extends Lock
{
    /**
     * @param mixed       $redis   a Redis connection (or a client)
     * @param string      $name
     * @param int         $seconds the lease; 0 for none
     * @param string|null $owner
     */
    public function __construct(protected $redis, $name, $seconds, $owner = null)
    {
        parent::__construct($name, $seconds, $owner);
    }

    /**
     * One attempt, without waiting (GOBLIN.LOCK): it never passes a caller waiting in line.
     *
     * @return bool
     */
    public function acquire()
    {
        return Commands::lock($this->client(), (string) $this->name, (string) $this->owner, $this->lease());
    }

    /**
     * Waits in line up to `$seconds` for the lock (GOBLIN.BLOCK); then runs `$callback`, if
     * given, releases the lock and returns its result (true without one).
     *
     * @param int           $seconds
     * @param callable|null $callback
     *
     * @throws LockTimeoutException
     */
    public function block($seconds, $callback = null)
    {
        $taken = $seconds > 0
            ? Commands::block($this->client(), (string) $this->name, (string) $this->owner, $this->lease(), (float) $seconds)
            : $this->acquire();
        if (!$taken) {
            throw new LockTimeoutException();
        }
        if (\is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release();
            }
        }

        return true;
    }

    /**
     * Releases the lock if this owner holds it (GOBLIN.CAD).
     *
     * @return bool
     */
    public function release()
    {
        return Commands::cad($this->client(), (string) $this->name, (string) $this->owner);
    }

    /**
     * Releases the lock, whoever holds it.
     *
     * @return void
     */
    public function forceRelease()
    {
        Commands::delete($this->client(), (string) $this->name);
    }

    /**
     * The owner the key holds, as it was written.
     *
     * @return string|null
     */
    protected function getCurrentOwner()
    {
        return Commands::holder($this->client(), (string) $this->name);
    }

    /**
     * The name of the Redis connection the lock is on.
     *
     * @return string|null
     */
    public function getConnectionName()
    {
        return $this->redis->getName();
    }

    private function client(): Client
    {
        return Clients::of($this->redis);
    }

    /** The lease in milliseconds; 0: none. */
    private function lease(): int
    {
        return max(0, (int) $this->seconds) * 1000;
    }
}
