<?php

declare(strict_types=1);

namespace Goblin\Tests\Symfony\RateLimiter;

use Goblin\Symfony\RateLimiter\FixedWindowLimiter;
use Goblin\Symfony\RateLimiter\RateLimiterFactory;
use Goblin\Symfony\RateLimiter\SlidingWindowLimiter;
use Goblin\Symfony\RateLimiter\TokenBucketLimiter;
use Goblin\Tests\Servers;
use PHPUnit\Framework\TestCase;
use Symfony\Component\OptionsResolver\Exception\InvalidOptionsException;
use Symfony\Component\RateLimiter\Exception\MaxWaitDurationExceededException;
use Symfony\Component\RateLimiter\Exception\ReserveNotSupportedException;
use Symfony\Component\RateLimiter\Policy\NoLimiter;

/**
 * Goblin's Symfony rate limiters, made by the factory from Symfony's configuration, on phpredis
 * and on Predis. Windows and buckets are the server's: the times below are read from its clock
 * (TIME), never from this machine's.
 */
final class RateLimiterTest extends TestCase
{
    private \Redis $raw;

    public static function clients(): array
    {
        return ['phpredis' => ['phpredis'], 'predis' => ['predis']];
    }

    protected function setUp(): void
    {
        $this->raw = Servers::redis();
        $this->raw->flushDB();
    }

    private function factory(string $client, array $config): RateLimiterFactory
    {
        return new RateLimiterFactory($config, 'phpredis' === $client ? Servers::redis() : Servers::predis());
    }

    /** @dataProvider clients */
    public function testTheFactoryTakesSymfonysConfiguration(string $client): void
    {
        $factory = fn (array $config): RateLimiterFactory => $this->factory($client, $config);
        $window = ['id' => 'a', 'limit' => 2, 'interval' => '1 minute'];
        $bucket = ['id' => 'a', 'policy' => 'token_bucket', 'limit' => 2, 'rate' => ['interval' => '5 seconds', 'amount' => 2]];
        $this->assertInstanceOf(FixedWindowLimiter::class, $factory(['policy' => 'fixed_window'] + $window)->create('x'));
        $this->assertInstanceOf(SlidingWindowLimiter::class, $factory(['policy' => 'sliding_window'] + $window)->create('x'));
        $this->assertInstanceOf(TokenBucketLimiter::class, $factory($bucket)->create('x'));
        $this->assertInstanceOf(NoLimiter::class, $factory(['id' => 'a', 'policy' => 'no_limit'])->create('x'));
        $this->expectException(InvalidOptionsException::class);
        $factory(['id' => 'a', 'policy' => 'leaky_bucket', 'limit' => 2]);
    }

    /** @dataProvider clients */
    public function testAFixedWindowCountsOnlyWhatItAccepts(string $client): void
    {
        $limiter = $this->factory($client, ['id' => 'api', 'policy' => 'fixed_window', 'limit' => 3, 'interval' => '2 seconds'])->create('10.0.0.1');
        $start = Servers::now($this->raw);
        $remaining = [];
        for ($i = 1; $i <= 3; ++$i) {
            $limit = $limiter->consume();
            $this->assertTrue($limit->isAccepted());
            $remaining[] = $limit->getRemainingTokens();
        }
        $this->assertSame([2, 1, 0], $remaining);
        $refused = $limiter->consume(2);
        $this->assertFalse($refused->isAccepted());
        $this->assertSame('3', $this->raw->get('api-10.0.0.1'), 'a refusal counts nothing');
        $this->assertGreaterThan(microtime(true), (float) $refused->getRetryAfter()->format('U.u'));
        $this->assertLessThanOrEqual(2000, $this->raw->pTTL('api-10.0.0.1'));

        $refused->wait();
        $this->assertTrue($limiter->consume(3)->isAccepted(), 'a new window, when the server says the first ended');
        $this->assertGreaterThanOrEqual($start + 2000, Servers::now($this->raw));

        $this->expectException(\InvalidArgumentException::class);
        $limiter->consume(4);
    }

    /** @dataProvider clients */
    public function testAFixedWindowReservesTheNextWindowWithinMaxTime(string $client): void
    {
        $limiter = $this->factory($client, ['id' => 'api', 'policy' => 'fixed_window', 'limit' => 1, 'interval' => '1 second'])->create('u');
        $start = Servers::now($this->raw);
        $this->assertTrue($limiter->reserve()->getRateLimit()->isAccepted());
        try {
            $limiter->reserve(1, 0.001);
            $this->fail('the window had more than a millisecond to run');
        } catch (MaxWaitDurationExceededException $e) {
            $this->assertFalse($e->getRateLimit()->isAccepted());
        }
        $reservation = $limiter->reserve(1, 5);
        $this->assertGreaterThan(0, $reservation->getWaitDuration());
        // At most the window's second, and the millisecond past it at which the server drops the key.
        $this->assertLessThanOrEqual(1.001, $reservation->getWaitDuration());
        $reservation->wait();
        $this->assertGreaterThanOrEqual($start + 1000, Servers::now($this->raw), 'acts when the window has ended');
        $limiter->reset();
        $this->assertSame(0, $this->raw->exists('api-u'));
    }

    /** @dataProvider clients */
    public function testATokenBucketRefillsOnTheServersClock(string $client): void
    {
        $config = ['id' => 'upload', 'policy' => 'token_bucket', 'limit' => 3, 'rate' => ['interval' => '1 second', 'amount' => 1]];
        $limiter = $this->factory($client, $config)->create('u');
        $start = Servers::now($this->raw);
        $remaining = [];
        for ($i = 1; $i <= 3; ++$i) {
            $limit = $limiter->consume();
            $this->assertTrue($limit->isAccepted());
            $remaining[] = $limit->getRemainingTokens();
        }
        $this->assertSame([2, 1, 0], $remaining);
        $refused = $limiter->consume();
        $this->assertFalse($refused->isAccepted());
        $this->assertSame(0, $refused->getRemainingTokens());
        $refused->wait();
        $this->assertTrue($limiter->consume()->isAccepted(), 'a token came back');
        // One token a second: the first comes back a second after the first was taken, not before.
        $this->assertGreaterThanOrEqual($start + 1000, Servers::now($this->raw));

        $this->expectException(\InvalidArgumentException::class);
        $limiter->consume(4);
    }

    /** @dataProvider clients */
    public function testATokenBucketReservationIsBookedAndActsWhenItsTokenComes(string $client): void
    {
        $config = ['id' => 'upload', 'policy' => 'token_bucket', 'limit' => 2, 'rate' => ['interval' => '1 second', 'amount' => 2]];
        $limiter = $this->factory($client, $config)->create('r');
        $this->assertTrue($limiter->consume(2)->isAccepted());
        // The bucket's state is GCRA's: the TAT, in Unix microseconds.
        $emptied = (int) $this->raw->get('upload-r');
        try {
            $limiter->reserve(2, 0.2);
            $this->fail('two tokens take a second to come back');
        } catch (MaxWaitDurationExceededException $e) {
            $this->assertFalse($e->getRateLimit()->isAccepted());
        }
        $this->assertSame($emptied, (int) $this->raw->get('upload-r'), 'a reservation refused books nothing');
        $reservation = $limiter->reserve(2, 3);
        $this->assertSame($emptied + 1_000_000, (int) $this->raw->get('upload-r'), 'two tokens booked, half a second each');
        $this->assertLessThanOrEqual(1.5, $reservation->getWaitDuration(), 'a second at most, and a token\'s interval late at most');
        $this->assertFalse($limiter->consume()->isAccepted(), 'the booked tokens are taken');
        $reservation->wait();
        // It acts once its two tokens are back: when the bucket, emptied, has refilled them.
        $this->assertGreaterThanOrEqual(intdiv($emptied, 1000), Servers::now($this->raw));
    }

    /** @dataProvider clients */
    public function testASlidingWindowWeighsThePreviousWindow(string $client): void
    {
        $limiter = $this->factory($client, ['id' => 'login', 'policy' => 'sliding_window', 'limit' => 4, 'interval' => '10 seconds'])->create('u');
        // The windows are the server's, aligned to its epoch: start early enough in one, so
        // that the calls below fall in the same window (they take well under 2 s).
        $into = Servers::now($this->raw) % 10000;
        if ($into > 8000) {
            usleep((10000 - $into + 50) * 1000);
        }
        $this->assertSame(3, $limiter->consume(1)->getRemainingTokens());
        $this->assertTrue($limiter->consume(3)->isAccepted());
        $refused = $limiter->consume(1);
        $this->assertFalse($refused->isAccepted());
        $this->assertSame(0, $refused->getRemainingTokens());
        $this->assertSame(4, $refused->getLimit());
        $this->assertMatchesRegularExpression('/^\d+:4:\d+$/', (string) $this->raw->get('login-u'), 'one key, the counts of two windows');
        $limiter->reset();
        $this->assertTrue($limiter->consume(4)->isAccepted());

        $this->expectException(ReserveNotSupportedException::class);
        $limiter->reserve();
    }
}
