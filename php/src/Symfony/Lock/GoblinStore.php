<?php

declare(strict_types=1);

namespace Goblin\Symfony\Lock;

use Goblin\Client;
use Goblin\CommandException;
use Goblin\Commands;
use Goblin\GoblinModuleException;
use Symfony\Component\Lock\BlockingSharedLockStoreInterface;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Store\ExpiringStoreTrait;

/**
 * Symfony Lock's store on Goblin, in RedisStore's place: the same constructor, on the same
 * clients (`\Redis`, `\RedisArray`, `\RedisCluster`, Predis), each operation one Goblin command,
 * with no script. It is a readers-writer lock (Goblin's GOBLIN.RLOCK family): readers share a
 * resource, a writer holds it alone, a sole reader may be promoted and a writer demoted. A
 * blocking acquire (`Lock::acquire(true)`, `acquireRead(true)`) waits in line inside the server,
 * readers and writers in one line, first come, first served, so a stream of readers never
 * starves a waiting writer; nothing polls.
 *
 * | Symfony calls              | Goblin runs                                        |
 * |----------------------------|----------------------------------------------------|
 * | `save()`                   | `GOBLIN.WLOCK resource token ms`                   |
 * | `saveRead()`               | `GOBLIN.RLOCK resource token ms`                   |
 * | `waitAndSave()`            | `GOBLIN.BWLOCK resource token ms timeout`          |
 * | `waitAndSaveRead()`        | `GOBLIN.BRLOCK resource token ms timeout`          |
 * | `putOffExpiration($ttl)`   | `GOBLIN.RWEXTEND resource token ms REPLACE`        |
 * | `delete()`                 | `GOBLIN.RWUNLOCK resource token`                   |
 * | `exists()`                 | `GOBLIN.RWHELD resource token`                     |
 *
 * The key is the resource's name, prefixed as the client prefixes keys: while a writer holds it,
 * a string holding the writer's token with a PX lease (the lock of Redis's own documentation,
 * which `GET` and `PTTL` read and GOBLIN.CAD releases); while readers hold it, a sorted set of
 * their tokens scored by the ends of their leases.
 */
class GoblinStore implements BlockingStoreInterface, BlockingSharedLockStoreInterface
{
    use ExpiringStoreTrait;

    private readonly Client $client;

    /**
     * @param \Redis|\RedisArray|\RedisCluster|\Predis\ClientInterface $redis      the application's client
     * @param float                                                   $initialTtl the lease of a lock, in seconds
     */
    public function __construct(object $redis, private readonly float $initialTtl = 300.0)
    {
        if (!Client::supports($redis)) {
            throw new InvalidArgumentException(sprintf(
                '"%s()" expects parameter 1 to be Redis, RedisArray, RedisCluster, RedisProxy, RedisClusterProxy or Predis\ClientInterface, "%s" given.',
                __METHOD__,
                get_debug_type($redis),
            ));
        }
        if ($initialTtl <= 0) {
            throw new InvalidTtlException(sprintf('"%s()" expects a strictly positive TTL. Got %d.', __METHOD__, $initialTtl));
        }
        $this->client = Client::of($redis);
    }

    /** Takes the lock to write: a new writer, the writer again, or the sole reader promoted. */
    public function save(Key $key): void
    {
        $this->take($key, true);
    }

    /** Takes the lock to read: a new reader, the reader again, or the writer demoted. */
    public function saveRead(Key $key): void
    {
        $this->take($key, false);
    }

    /**
     * Waits in line inside the server (GOBLIN.BWLOCK, in slices shorter than the client's read
     * timeout) until the lock is granted to write; its lease runs from the grant. A reader that
     * waits to be promoted while another reader does is refused (LockConflictedException): the
     * two would wait for each other for ever.
     */
    public function waitAndSave(Key $key): void
    {
        $this->wait($key, true);
    }

    /** Waits in line inside the server (GOBLIN.BRLOCK) until the lock is granted to read. */
    public function waitAndSaveRead(Key $key): void
    {
        $this->wait($key, false);
    }

    /** Sets the lease to `$ttl` seconds from now, in whichever mode it is held (it does not add). */
    public function putOffExpiration(Key $key, float $ttl): void
    {
        $key->reduceLifetime($ttl);
        $held = $this->storage(fn (): bool => Commands::extendReadWriteLock(
            $this->client,
            (string) $key,
            $this->token($key),
            Commands::milliseconds($ttl),
        ));
        if (!$held) {
            throw new LockConflictedException();
        }
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        $this->storage(fn (): bool => Commands::unlockReadWriteLock($this->client, (string) $key, $this->token($key)));
    }

    public function exists(Key $key): bool
    {
        return null !== $this->storage(fn (): ?string => Commands::readWriteLockHeld($this->client, (string) $key, $this->token($key)));
    }

    /** GOBLIN.WLOCK (`$write`) or GOBLIN.RLOCK once, without waiting. */
    private function take(Key $key, bool $write): void
    {
        $key->reduceLifetime($this->initialTtl);
        $taken = $this->storage(fn (): bool => Commands::readWriteLock(
            $this->client,
            (string) $key,
            $this->token($key),
            Commands::milliseconds($this->initialTtl),
            $write,
        ));
        if (!$taken) {
            throw new LockConflictedException();
        }
        $this->checkNotExpired($key);
    }

    /** GOBLIN.BWLOCK (`$write`) or GOBLIN.BRLOCK in slices, until granted. */
    private function wait(Key $key, bool $write): void
    {
        $sent = microtime(true);
        $this->storage(fn (): bool => Commands::wait(
            function (float $wait) use ($key, $write, &$sent): bool {
                $sent = microtime(true);

                return Commands::waitForReadWriteLock(
                    $this->client,
                    (string) $key,
                    $this->token($key),
                    Commands::milliseconds($this->initialTtl),
                    $write,
                    $wait,
                );
            },
            null,
            $this->client->sliceLength((string) $key),
        ));
        // The lease started no earlier than the command that was granted was sent.
        $key->reduceLifetime($this->initialTtl - (microtime(true) - $sent));
        $this->checkNotExpired($key);
    }

    /** The owner's token, random, kept in the key's state (it travels with a serialized key). */
    private function token(Key $key): string
    {
        if (!$key->hasState(__CLASS__)) {
            $key->setState(__CLASS__, base64_encode(random_bytes(32)));
        }

        return (string) $key->getState(__CLASS__);
    }

    /**
     * Runs `$operation`, the server's error reply made Symfony's LockStorageException as
     * RedisStore makes it (and `-DEADLOCK`, a promotion that could never be granted, a
     * LockConflictedException); a server without Goblin stays the package's one clear error.
     *
     * @template T
     *
     * @param callable(): T $operation
     *
     * @return T
     */
    private function storage(callable $operation): mixed
    {
        try {
            return $operation();
        } catch (GoblinModuleException $error) {
            throw $error;
        } catch (CommandException $error) {
            if (str_starts_with($error->getMessage(), 'DEADLOCK')) {
                throw new LockConflictedException($error->getMessage(), 0, $error);
            }

            throw new LockStorageException($error->getMessage(), 0, $error);
        }
    }
}
