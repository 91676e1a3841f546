<?php

declare(strict_types=1);

namespace Goblin\Symfony\RateLimiter;

/**
 * Times as Symfony's RateLimit and Reservation carry them. The server decides on its own clock
 * and replies how long is left (a window's TTL, a retry's seconds); those become instants here,
 * from the moment the reply arrived on this machine's clock, which is what Reservation::wait()
 * and RateLimit::wait() sleep against.
 */
final class Clock
{
    private function __construct()
    {
    }

    /**
     * Seconds from a reply until a key whose PTTL it gave (-1, -2: none) is gone: the server
     * expires it once its clock is past the expiry, so a millisecond later than the TTL says.
     */
    public static function afterTtl(int $ttl): float
    {
        return $ttl > 0 ? ($ttl + 1) / 1000 : 0.0;
    }

    public static function at(float $time): \DateTimeImmutable
    {
        $instant = \DateTimeImmutable::createFromFormat('U.u', sprintf('%.6F', $time));
        \assert($instant instanceof \DateTimeImmutable);

        return $instant;
    }
}
