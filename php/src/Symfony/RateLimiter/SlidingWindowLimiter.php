<?php

declare(strict_types=1);

namespace Goblin\Symfony\RateLimiter;

use Goblin\Client;
use Goblin\Commands;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * Symfony's sliding window (`policy: sliding_window`) on Goblin: the hits of the current window
 * plus the previous window's, weighted by how much of it the last `$interval` seconds still
 * overlap, at most `$limit`. A decision is one GOBLIN.SWINDOW, on the server's clock; its
 * windows are aligned to the epoch (Symfony's start at a key's first hit). As Symfony's, it
 * cannot reserve.
 */
final class SlidingWindowLimiter implements LimiterInterface
{
    private readonly Client $client;

    public function __construct(private readonly string $id, private readonly int $limit, private readonly float $interval, object $redis)
    {
        if ($interval <= 0) {
            throw new \InvalidArgumentException(sprintf('The interval of "%s" must be longer than 0 seconds.', __CLASS__));
        }
        $this->client = Client::of($redis);
    }

    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        throw new ReserveNotSupportedException(__CLASS__);
    }

    public function consume(int $tokens = 1): RateLimit
    {
        $window = Commands::slidingWindow($this->client, $this->id, $this->interval, $this->limit, $tokens);
        $now = microtime(true);
        $length = Commands::milliseconds($this->interval);
        $hits = intdiv($window['previous'] * $window['previousTtl'], $length) + $window['current'];

        // The current window ends when the previous one stops weighing.
        return new RateLimit($this->limit - $hits, Clock::at($now + Clock::afterTtl($window['previousTtl'])), $window['admitted'], $this->limit);
    }

    public function reset(): void
    {
        Commands::delete($this->client, $this->id);
    }
}
