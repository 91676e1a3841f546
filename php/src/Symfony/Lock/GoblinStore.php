<?php

declare(strict_types=1);

namespace Goblin\Symfony\Lock;

use Goblin\Client;
use Goblin\CommandException;
use Goblin\Commands;
use Goblin\GoblinModuleException;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\Store\ExpiringStoreTrait;

/**
 * Symfony Lock's store on Goblin, in RedisStore's place: the same constructor, on the same
 * clients (`\Redis`, `\RedisArray`, `\RedisCluster`, Predis), and each operation one Goblin
 * command, with no script. A blocking acquire (`Lock::acquire(true)`) waits in line inside the
 * server (GOBLIN.BLOCK), first come, first served, instead of polling `save()`.
 *
 * | Symfony calls              | Goblin runs                                  |
 * |----------------------------|----------------------------------------------|
 * | `save()`                   | `GOBLIN.LOCK resource token ms`              |
 * | `waitAndSave()`            | `GOBLIN.BLOCK resource token ms timeout`     |
 * | `putOffExpiration($ttl)`   | `GOBLIN.EXTEND resource token ms REPLACE`    |
 * | `delete()`                 | `GOBLIN.CAD resource token`                  |
 * | `exists()`                 | `GET resource`                               |
 *
 * The key is the resource's name (prefixed as the client prefixes keys), a string holding the
 * owner's token with a PX lease: the lock of Redis's own documentation, which `GET` and `PTTL`
 * read and DELEX, DELIFEQ and GOBLIN.CAD release.
 */
class GoblinStore implements BlockingStoreInterface
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

    public function save(Key $key): void
    {
        $key->reduceLifetime($this->initialTtl);
        $taken = $this->storage(fn (): bool => Commands::lock($this->client, (string) $key, $this->token($key), $this->lease($this->initialTtl)));
        if (!$taken) {
            throw new LockConflictedException();
        }
        $this->checkNotExpired($key);
    }

    /**
     * Waits in line inside the server (GOBLIN.BLOCK, in slices shorter than the client's read
     * timeout) until the lock is granted; its lease runs from the grant.
     */
    public function waitAndSave(Key $key): void
    {
        $sent = microtime(true);
        $this->storage(fn (): bool => Commands::wait(
            function (float $wait) use ($key, &$sent): bool {
                $sent = microtime(true);

                return null !== $this->client->call(
                    'GOBLIN.BLOCK',
                    (string) $key,
                    [$this->token($key), $this->lease($this->initialTtl), Commands::timeout($wait)],
                );
            },
            null,
            $this->client->sliceLength((string) $key),
        ));
        // The lease started no earlier than the command that was granted was sent.
        $key->reduceLifetime($this->initialTtl - (microtime(true) - $sent));
        $this->checkNotExpired($key);
    }

    /** Sets the lease to `$ttl` seconds from now (it does not add them to what is left). */
    public function putOffExpiration(Key $key, float $ttl): void
    {
        $key->reduceLifetime($ttl);
        $held = $this->storage(fn (): bool => Commands::extend($this->client, (string) $key, $this->token($key), $this->lease($ttl)));
        if (!$held) {
            throw new LockConflictedException();
        }
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        $this->storage(fn (): bool => Commands::cad($this->client, (string) $key, $this->token($key)));
    }

    public function exists(Key $key): bool
    {
        return $this->storage(fn (): bool => Commands::holder($this->client, (string) $key) === $this->token($key));
    }

    /** The owner's token, random, kept in the key's state (it travels with a serialized key). */
    private function token(Key $key): string
    {
        if (!$key->hasState(__CLASS__)) {
            $key->setState(__CLASS__, base64_encode(random_bytes(32)));
        }

        return (string) $key->getState(__CLASS__);
    }

    private function lease(float $seconds): int
    {
        return Commands::milliseconds($seconds);
    }

    /**
     * Runs `$operation`, the server's error reply made Symfony's LockStorageException as
     * RedisStore makes it; a server without Goblin stays the package's one clear error.
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
            throw new LockStorageException($error->getMessage(), 0, $error);
        }
    }
}
