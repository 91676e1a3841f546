<?php

declare(strict_types=1);

namespace Goblin;

/**
 * The command vocabulary, once: every Goblin command the package sends is built here and its
 * reply read here. The stores, locks and limiters are thin shells over it: each decision they
 * make is one of these calls, with no script and no `MULTI`.
 */
final class Commands
{
    /** The longest one blocking command waits when the client's socket has no read timeout. */
    public const LONGEST_SLICE = 60.0;

    /** The shortest wait a blocking command is sent (the server rounds up to the millisecond; 0 would wait for ever). */
    public const SHORTEST_WAIT = 0.001;

    private function __construct()
    {
    }

    // ------------------------------------------------------------------ token locks

    /** `GOBLIN.LOCK key token ms`: taken (or taken again by its holder), or not. */
    public static function lock(Client $client, string $key, string $token, int $milliseconds): bool
    {
        return null !== $client->call('GOBLIN.LOCK', $key, [$token, $milliseconds]);
    }

    /**
     * `GOBLIN.BLOCK key token ms timeout`, in slices shorter than the client's read timeout, until
     * the lock is granted (true) or `$timeout` seconds have passed (false; null: for ever).
     */
    public static function block(Client $client, string $key, string $token, int $milliseconds, ?float $timeout): bool
    {
        return self::wait(
            static fn (float $wait): bool => null !== $client->call('GOBLIN.BLOCK', $key, [$token, $milliseconds, self::timeout($wait)]),
            $timeout,
            $client->sliceLength($key),
        );
    }


    /** `GOBLIN.CAD key value`: whether `$value` held the lock (or the lease) and gave it back. */
    public static function cad(Client $client, string $key, string $value): bool
    {
        return 1 === $client->call('GOBLIN.CAD', $key, [$value]);
    }

    /** `GET key`: what a token lock's key holds, raw (null: nothing). */
    public static function holder(Client $client, string $key): ?string
    {
        $value = $client->core('GET', $key);

        return \is_string($value) ? $value : null;
    }

    // ------------------------------------------------------------------ readers-writer locks

    /**
     * `GOBLIN.WLOCK` (`$write`) or `GOBLIN.RLOCK key token ms`: the lease taken (or renewed,
     * promoted, demoted), or not.
     */
    public static function readWriteLock(Client $client, string $key, string $token, int $milliseconds, bool $write): bool
    {
        return null !== $client->call($write ? 'GOBLIN.WLOCK' : 'GOBLIN.RLOCK', $key, [$token, $milliseconds]);
    }

    /**
     * One `GOBLIN.BWLOCK` (`$write`) or `GOBLIN.BRLOCK key token ms timeout`, waiting in line at
     * most `$wait` seconds: granted, or not yet.
     */
    public static function waitForReadWriteLock(Client $client, string $key, string $token, int $milliseconds, bool $write, float $wait): bool
    {
        $command = $write ? 'GOBLIN.BWLOCK' : 'GOBLIN.BRLOCK';

        return null !== $client->call($command, $key, [$token, $milliseconds, self::timeout($wait)]);
    }

    /** `GOBLIN.RWEXTEND key token ms REPLACE`: whether `$token` held a lease, which now ends `$milliseconds` from now. */
    public static function extendReadWriteLock(Client $client, string $key, string $token, int $milliseconds): bool
    {
        return 0 !== $client->call('GOBLIN.RWEXTEND', $key, [$token, $milliseconds, 'REPLACE']);
    }

    /** `GOBLIN.RWUNLOCK key token`: whether `$token` held a lease and gave it back. */
    public static function unlockReadWriteLock(Client $client, string $key, string $token): bool
    {
        return 1 === $client->call('GOBLIN.RWUNLOCK', $key, [$token]);
    }

    /** `GOBLIN.RWHELD key token`: `write`, `read`, or null for no lease. */
    public static function readWriteLockHeld(Client $client, string $key, string $token): ?string
    {
        $mode = $client->call('GOBLIN.RWHELD', $key, [$token]);

        return \is_string($mode) ? $mode : null;
    }

    // ------------------------------------------------------------------ leases (semaphores)

    /**
     * `GOBLIN.ZWINDOW key * window limit member`: `$member` holds one of the `$limit` slots of
     * a window of `$window` seconds on the server's clock (taken, or renewed), or not.
     */
    public static function lease(Client $client, string $key, float $window, int $limit, string $member): bool
    {
        return 0 !== $client->call('GOBLIN.ZWINDOW', $key, ['*', self::seconds($window), $limit, $member]);
    }

    /**
     * `GOBLIN.BZWINDOW key window limit member timeout`, in slices: a slot, waited for in line
     * up to `$timeout` seconds (null: for ever).
     */
    public static function waitForLease(Client $client, string $key, float $window, int $limit, string $member, ?float $timeout): bool
    {
        return self::wait(
            static fn (float $wait): bool => null !== $client->call(
                'GOBLIN.BZWINDOW',
                $key,
                [self::seconds($window), $limit, $member, self::timeout($wait)],
            ),
            $timeout,
            $client->sliceLength($key),
        );
    }

    // ------------------------------------------------------------------ rate limits

    /**
     * `GOBLIN.FWINDOW key window BY n`: a fixed window of `$window` ms armed at its first hit;
     * the count after this hit and the milliseconds until the window ends (-1: never).
     *
     * @return array{int, int}
     */
    public static function fixedWindow(Client $client, string $key, int $window, int $by = 1): array
    {
        $reply = $client->call('GOBLIN.FWINDOW', $key, 1 === $by ? [$window] : [$window, 'BY', $by]);

        return [self::integer($reply, 0), self::integer($reply, 1)];
    }

    /**
     * `GOBLIN.FWSTATS key`: a fixed window's count and the milliseconds until it ends (`[0, -2]`
     * for none), read only.
     *
     * @return array{int, int}
     */
    public static function fixedWindowStats(Client $client, string $key): array
    {
        $reply = $client->call('GOBLIN.FWSTATS', $key);

        return [self::integer($reply, 0), self::integer($reply, 1)];
    }

    /**
     * `INCREX key BYINT n UBOUND limit PX window ENX`: `$tokens` counted in a fixed window of
     * `$window` ms armed at its first hit, only if the count stays within `$limit`; the count
     * after the call and whether this call was counted.
     *
     * @return array{int, bool}
     */
    public static function boundedWindow(Client $client, string $key, int $tokens, int $limit, int $window): array
    {
        $reply = $client->call('INCREX', $key, ['BYINT', $tokens, 'UBOUND', $limit, 'PX', $window, 'ENX']);

        return [self::integer($reply, 0), 0 !== self::integer($reply, 1)];
    }

    /**
     * `INCREX key BYINT n PX window ENX`: `$tokens` counted in the window, with no bound (a
     * reservation booked beyond the limit); the count after it.
     */
    public static function bookWindow(Client $client, string $key, int $tokens, int $window): int
    {
        return self::integer($client->call('INCREX', $key, ['BYINT', $tokens, 'PX', $window, 'ENX']), 0);
    }

    /** `PTTL key`: milliseconds until the key expires (-1: never, -2: no key). */
    public static function ttl(Client $client, string $key): int
    {
        $ttl = $client->core('PTTL', $key);

        return \is_int($ttl) ? $ttl : -2;
    }

    /**
     * `GOBLIN.GCRA key max_burst tokens_per_period period TOKENS n`, on the server's clock.
     *
     * @return array{limited: bool, limit: int, remaining: int, retryAfter: int, resetAfter: int}
     */
    public static function gcra(Client $client, string $key, int $maxBurst, int $perPeriod, float $period, int $tokens): array
    {
        $reply = $client->call('GOBLIN.GCRA', $key, [$maxBurst, $perPeriod, self::seconds($period), 'TOKENS', $tokens]);

        return [
            'limited' => 0 !== self::integer($reply, 0),
            'limit' => self::integer($reply, 1),
            'remaining' => self::integer($reply, 2),
            'retryAfter' => self::integer($reply, 3),
            'resetAfter' => self::integer($reply, 4),
        ];
    }

    /**
     * `GOBLIN.SWINDOW key window limit COST n`: the sliding window counter, on the server's clock.
     *
     * @return array{admitted: bool, previous: int, previousTtl: int, current: int, currentTtl: int}
     */
    public static function slidingWindow(Client $client, string $key, float $window, int $limit, int $cost): array
    {
        $reply = $client->call('GOBLIN.SWINDOW', $key, [self::seconds($window), $limit, 'COST', $cost]);

        return [
            'admitted' => 0 !== self::integer($reply, 0),
            'previous' => self::integer($reply, 1),
            'previousTtl' => self::integer($reply, 2),
            'current' => self::integer($reply, 3),
            'currentTtl' => self::integer($reply, 4),
        ];
    }

    /** `DEL key`: a limiter or a lock cleared, whoever holds it. */
    public static function delete(Client $client, string $key): void
    {
        $client->core('DEL', $key);
    }

    // ------------------------------------------------------------------ arguments

    /**
     * Runs `$attempt` (one blocking command, given how long it may wait; true when granted) in
     * slices of `$slice` seconds until it is granted or `$timeout` seconds have passed (null:
     * for ever), the last slice cut to the time left. It runs at least once.
     *
     * @param callable(float): bool $attempt
     */
    public static function wait(callable $attempt, ?float $timeout, float $slice): bool
    {
        $deadline = null === $timeout ? null : microtime(true) + max(0.0, $timeout);
        while (true) {
            $wait = null === $deadline ? $slice : min($slice, max($deadline - microtime(true), self::SHORTEST_WAIT));
            if ($attempt($wait)) {
                return true;
            }
            if (null !== $deadline && microtime(true) >= $deadline) {
                return false;
            }
        }
    }

    /** A blocking command's timeout: seconds to the microsecond, never below {@see SHORTEST_WAIT}. */
    public static function timeout(float $seconds): string
    {
        return sprintf('%.6F', max($seconds, self::SHORTEST_WAIT));
    }

    /** Seconds as the server reads a double: `60`, `0.5`, to the microsecond. */
    public static function seconds(float $seconds): string
    {
        $text = rtrim(sprintf('%.6F', $seconds), '0');

        return str_ends_with($text, '.') ? substr($text, 0, -1) : $text;
    }

    /** A lease in whole milliseconds from seconds, rounded up (never 0 for a positive one). */
    public static function milliseconds(float $seconds): int
    {
        return (int) ceil($seconds * 1000);
    }

    private static function integer(mixed $reply, int $index): int
    {
        $value = \is_array($reply) ? ($reply[$index] ?? null) : null;
        if (!\is_int($value)) {
            throw new CommandException(sprintf('unexpected reply: %s', var_export($reply, true)));
        }

        return $value;
    }
}
