<?php

declare(strict_types=1);

namespace Goblin\Symfony\RateLimiter;

use Goblin\Client;
use Goblin\Commands;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\LimiterInterface;
use Symfony\Component\RateLimiter\Policy\Rate;
use Symfony\Component\RateLimiter\RateLimit;
use Symfony\Component\RateLimiter\Reservation;

/**
 * Symfony's token bucket (`policy: token_bucket`) on Goblin's GCRA: a bucket of `$maxBurst`
 * tokens, full at first, refilled by `$rate` (its amount every interval), on the server's clock.
 * GCRA refills smoothly, a token every interval / amount, where Symfony's bucket gets the whole
 * amount at each interval's end. A decision is one GOBLIN.GCRA.
 *
 * A reservation that may wait up to `$maxTime` seconds is the same one command, with the burst
 * grown by the tokens that refill in `$maxTime`: the server books it only if it can act within
 * that time, and it then acts when the bucket holds it again, which the reply tells to within a
 * refill interval or a second, whichever is shorter (never early). A wait without bound
 * (`$maxTime` null) is bounded at a year.
 */
final class TokenBucketLimiter implements LimiterInterface
{
    /** The longest a reservation may wait, when its `$maxTime` is null: a year. */
    private const LONGEST_WAIT = 365 * 86400.0;

    private readonly Client $client;

    /** Seconds between two tokens. */
    private readonly float $emission;

    private readonly int $amount;

    private readonly float $period;

    public function __construct(private readonly string $id, private readonly int $maxBurst, Rate $rate, object $redis)
    {
        if ($maxBurst < 1) {
            throw new \InvalidArgumentException(sprintf('Cannot set the burst size of "%s" to 0, as that would never accept any hit.', __CLASS__));
        }
        // Rate keeps its interval and amount to itself; these two of its methods tell them.
        $this->period = (float) $rate->calculateTimeForTokens(1);
        $this->amount = $rate->calculateNewTokensDuringInterval($this->period);
        if ($this->period <= 0 || $this->amount < 1) {
            throw new \InvalidArgumentException(sprintf('The rate of "%s" must refill at least one token in an interval longer than 0 seconds.', __CLASS__));
        }
        $this->emission = $this->period / $this->amount;
        $this->client = Client::of($redis);
    }

    public function reserve(int $tokens = 1, ?float $maxTime = null): Reservation
    {
        if ($tokens > $this->maxBurst) {
            throw new \InvalidArgumentException(sprintf(
                'Cannot reserve more tokens (%d) than the burst size of the rate limiter (%d).',
                $tokens,
                $this->maxBurst,
            ));
        }
        // The tokens that refill while the caller may wait: the server lets the TAT run that much further ahead.
        $ahead = (int) floor(min($maxTime ?? self::LONGEST_WAIT, self::LONGEST_WAIT) / $this->emission);
        $reply = Commands::gcra($this->client, $this->id, $this->maxBurst - 1 + $ahead, $this->amount, $this->period, $tokens);
        $now = microtime(true);
        if ($reply['limited']) {
            $wait = max(0, $reply['retryAfter']) + $ahead * $this->emission;

            throw new MaxWaitDurationExceededException(
                sprintf(
                    'The rate limiter wait time ("%d" seconds) is longer than the provided maximum time ("%d" seconds).',
                    $wait,
                    $maxTime ?? self::LONGEST_WAIT,
                ),
                new RateLimit(max(0, $reply['remaining'] - $ahead), Clock::at($now + $wait), false, $this->maxBurst),
            );
        }
        // Not early: at most a token's interval (from `remaining`) or a second (from `reset_after`) late.
        $wait = max(0.0, min(($ahead - $reply['remaining']) * $this->emission, $reply['resetAfter'] - $this->maxBurst * $this->emission));
        $available = max(0, $reply['remaining'] - $ahead);

        return new Reservation($now + $wait, new RateLimit($available, Clock::at($now + $wait), 0.0 === $wait, $this->maxBurst));
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
