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

    public static function at(float $time): \DateTimeImmutable
    {
        $instant = \DateTimeImmutable::createFromFormat('U.u', sprintf('%.6F', $time));
        \assert($instant instanceof \DateTimeImmutable);

        return $instant;
    }
}
