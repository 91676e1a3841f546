<?php

declare(strict_types=1);

namespace Goblin\Symfony\RateLimiter;

use Goblin\Client;
use Goblin\Commands;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * Symfony's fixed window (`policy: fixed_window`) on Goblin: at most `$limit` tokens in a window
 * of `$interval` seconds that starts at its first hit, on the server's clock. A decision is one
 * `INCREX key BYINT n UBOUND limit PX interval ENX`, which counts the tokens only if they fit, as
 * Symfony counts only what it accepts; a refusal reads when the window ends (`PTTL`).
 *
 * A reservation that may wait (`reserve($tokens, $maxTime)`) is booked in the current window
 * beyond the limit, to act when it ends, as Symfony's own books it.
 */
final class FixedWindowLimiter implements LimiterInterface
{
    private readonly Client $client;

    public function __construct(private readonly string $id, private readonly int $limit, private readonly float $interval, object $redis)
    {
        if ($limit < 1) {
            throw new \InvalidArgumentException(sprintf('Cannot set the limit of "%s" to 0, as that would never accept any hit.', __CLASS__));
        }
        if ($interval <= 0) {
            throw new \InvalidArgumentException(sprintf('The interval of "%s" must be longer than 0 seconds.', __CLASS__));
        }
        $this->client = Client::of($redis);
    }

    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        if ($tokens > $this->limit) {
            throw new \InvalidArgumentException(sprintf('Cannot reserve more tokens (%d) than the size of the rate limiter (%d).', $tokens, $this->limit));
        }
        $window = Commands::milliseconds($this->interval);
        [$count, $counted] = Commands::boundedWindow($this->client, $this->id, $tokens, $this->limit, $window);
        if ($counted) {
            $now = microtime(true);

            return new Reservation($now, new RateLimit($this->limit - $count, Clock::at($now), true, $this->limit));
        }
        $ttl = Commands::ttl($this->client, $this->id);
        $now = microtime(true);
        $wait = Clock::afterTtl($ttl);
        $available = max(0, $this->limit - $count);
        if (null !== $maxTime && $wait > $maxTime) {
            throw new MaxWaitDurationExceededException(
                sprintf('The rate limiter wait time ("%d" seconds) is longer than the provided maximum time ("%d" seconds).', $wait, $maxTime),
                new RateLimit($available, Clock::at($now + $wait), false, $this->limit),
            );
        }
        Commands::bookWindow($this->client, $this->id, $tokens, $window);

        return new Reservation($now + $wait, new RateLimit(0, Clock::at($now + $wait), false, $this->limit));
    }

    public function consume(int $tokens = 1): RateLimit
    {
        try {
            return $this->reserve($tokens, 0)->getRateLimit();
        } catch (MaxWaitDurationExceededException $e) {
            return $e->getRateLimit();
        }
    }

    public function reset(): void
    {
        Commands::delete($this->client, $this->id);
    }
}
