<?php

declare(strict_types=1);

namespace Goblin\Tests\Laravel;

use Goblin\Laravel\Limiters\ConcurrencyLimiter;
use Goblin\Laravel\Limiters\ConcurrencyLimiterBuilder;
use Goblin\Laravel\Limiters\DurationLimiterBuilder;
use Goblin\Laravel\Middleware\ThrottleRequestsWithGoblin;
use Goblin\Laravel\Queue\RateLimitedWithGoblin;
use Goblin\Laravel\Queue\ThrottlesExceptionsWithGoblin;
use Goblin\Laravel\Redis\PhpRedisConnection;
use Goblin\Laravel\Redis\PredisConnection;
use Goblin\Tests\Servers;
use Illuminate\Cache\RateLimiter;
use Illuminate\Cache\RateLimiting\Limit;
use Illuminate\Foundation\Application as LaravelApplication;
use Illuminate\Http\Exceptions\ThrottleRequestsException;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use Illuminate\Routing\Middleware\ThrottleRequestsWithRedis;
use Illuminate\Routing\Route;
use Illuminate\Support\Facades\Redis;
use PHPUnit\Framework\TestCase;

/**
 * What `Redis::throttle()`, `Redis::funnel()`, the `throttle` middleware and the Redis job
 * middleware become with GoblinServiceProvider: the ground of Laravel's
 * ThrottleRequestsWithRedisTest, RateLimitedWithRedisTest and ThrottlesExceptionsWithRedisTest
 * (which need Orchestra Testbench), and what they do not prove: that a request past the limit
 * is refused.
 */
final class LimitersTest extends TestCase
{
    private LaravelApplication $app;
    private \Redis $raw;

    public static function clients(): array
    {
        return ['phpredis' => ['phpredis'], 'predis' => ['predis']];
    }

    private function boot(string $client, array $goblin = []): void
    {
        $this->app = Application::make($client, $goblin);
        $this->raw = Servers::redis();
        $this->raw->select(3);
        $this->raw->flushDB();
    }

    /** @dataProvider clients */
    public function testTheConnectionsAreGoblinsUnlessConfiguredOff(string $client): void
    {
        $this->boot($client);
        $connection = Redis::connection();
        $this->assertInstanceOf('phpredis' === $client ? PhpRedisConnection::class : PredisConnection::class, $connection);
        $this->assertInstanceOf(DurationLimiterBuilder::class, Redis::throttle('a'));
        $this->assertInstanceOf(ConcurrencyLimiterBuilder::class, Redis::funnel('a'));

        $this->boot($client, ['redis' => false]);
        $this->assertNotInstanceOf(DurationLimiterBuilder::class, Redis::throttle('a'));
    }

    /** @dataProvider clients */
    public function testThrottleRefusesPastTheLimitAtOnce(string $client): void
    {
        $this->boot($client);
        $ran = [];
        $refused = [];
        foreach (range(1, 3) as $i) {
            Redis::throttle('api')->allow(2)->every(60)->block(3)->then(
                static function () use (&$ran, $i): void {
                    $ran[] = $i;
                },
                static function () use (&$refused, $i): void {
                    $refused[] = $i;
                },
            );
        }
        $this->assertSame([1, 2], $ran);
        $this->assertSame([3], $refused);
        // One fixed window, keyed as the connection prefixes keys, armed by its first hit.
        $this->assertSame('3', $this->raw->get('app_api'));
        $this->assertGreaterThan(55000, $this->raw->pTTL('app_api'));
    }

    /** @dataProvider clients */
    public function testThrottleWaitsForTheWindowToEnd(string $client): void
    {
        $this->boot($client);
        $start = Servers::now();
        $this->assertTrue(Redis::throttle('short')->allow(1)->every(1)->then(static fn (): bool => true));
        $before = Servers::calls()['goblin.fwindow'] ?? 0;
        $this->assertTrue(Redis::throttle('short')->allow(1)->every(1)->block(3)->then(static fn (): bool => true));
        $this->assertGreaterThanOrEqual($start + 1000, Servers::now());
        // Refused once, then the TTL of that reply slept: the next attempt is the next window's.
        $this->assertSame(2, (Servers::calls()['goblin.fwindow'] ?? 0) - $before, 'one sleep, no polling');
    }

    /** @dataProvider clients */
    public function testFunnelWaitsInLineForASlot(string $client): void
    {
        $this->boot($client);
        $holder = new class (Redis::connection(), 'jobs', 1, 1) extends ConcurrencyLimiter {
            protected function release($key, $id)
            {
                // kept until its lease of 1 s ends
            }
        };
        $start = Servers::now();
        $this->assertTrue($holder->block(0, static fn (): bool => true));
        $before = Servers::calls()['goblin.bzwindow'] ?? 0;
        $result = Redis::funnel('jobs')->limit(1)->releaseAfter(1)->block(5)->then(static fn (): string => 'second');
        $this->assertSame('second', $result);
        $this->assertGreaterThanOrEqual($start + 1000, Servers::now(), 'granted when the lease ended');
        $this->assertSame(1, (Servers::calls()['goblin.bzwindow'] ?? 0) - $before, 'one GOBLIN.BZWINDOW, no polling');
        $this->assertSame(0, $this->raw->zCard('app_jobs'), 'released after the callback');

        $this->assertTrue($holder->block(0, static fn (): bool => true));
        $this->assertSame('refused', Redis::funnel('jobs')->limit(1)->releaseAfter(1)->block(0)->then(
            static fn (): string => 'ran',
            static fn (): string => 'refused',
        ));
    }

    /** @dataProvider clients */
    public function testThrottleRequestsRefusesTheThirdRequest(string $client): void
    {
        $this->boot($client);
        $middleware = $this->app->make(ThrottleRequestsWithRedis::class);
        $this->assertInstanceOf(ThrottleRequestsWithGoblin::class, $middleware);
        $next = static fn (): Response => new Response('yes');

        $remaining = [];
        for ($i = 1; $i <= 2; ++$i) {
            $response = $middleware->handle($this->request(), $next, 2, 1);
            $this->assertSame('yes', $response->getContent());
            $this->assertSame('2', $response->headers->get('X-RateLimit-Limit'));
            $remaining[] = $response->headers->get('X-RateLimit-Remaining');
        }
        $this->assertSame(['1', '0'], $remaining);
        try {
            $middleware->handle($this->request(), $next, 2, 1);
            $this->fail('the third request in the minute passed');
        } catch (ThrottleRequestsException $e) {
            $this->assertSame(429, $e->getStatusCode());
            $headers = $e->getHeaders();
            $this->assertSame(0, $headers['X-RateLimit-Remaining']);
            $this->assertGreaterThanOrEqual(1, $headers['Retry-After']);
            $this->assertLessThanOrEqual(60, $headers['Retry-After']);
        }
        $keys = $this->raw->keys('app_*');
        $this->assertCount(1, $keys, 'one window for the client');
        $this->assertSame('3', $this->raw->get($keys[0]));
    }

    /** @dataProvider clients */
    public function testRateLimitedJobsAreReleasedPastTheLimit(string $client): void
    {
        $this->boot($client);
        $this->app->make(RateLimiter::class)->for('imports', static fn (): Limit => Limit::perMinute(1));
        $middleware = new RateLimitedWithGoblin('imports');
        $first = new RecordingJob();
        $middleware->handle($first, static fn (RecordingJob $job): bool => $job->ran = true);
        $this->assertTrue($first->ran);
        $this->assertNull($first->releasedFor);

        $second = new RecordingJob();
        $middleware->handle($second, static fn (RecordingJob $job): bool => $job->ran = true);
        $this->assertFalse($second->ran);
        $this->assertGreaterThan(0, $second->releasedFor);
        $this->assertLessThanOrEqual(63, $second->releasedFor);

        $dont = new RecordingJob();
        $this->assertFalse((new RateLimitedWithGoblin('imports'))->dontRelease()->handle($dont, static fn (RecordingJob $job): bool => $job->ran = true));
        $this->assertFalse($dont->ran);
        $this->assertNull($dont->releasedFor);
    }

    /** @dataProvider clients */
    public function testThrottledExceptionsOpenTheCircuitAndASuccessClosesIt(string $client): void
    {
        $this->boot($client);
        $failing = static function (): void {
            throw new \RuntimeException('the service is down');
        };
        $middleware = static fn (): ThrottlesExceptionsWithGoblin => (new ThrottlesExceptionsWithGoblin(2, 10))->by('mailer');

        $start = Servers::now();
        foreach ([0, 0] as $delay) {
            $job = new RecordingJob();
            $middleware()->handle($job, $failing);
            $this->assertSame($delay, $job->releasedFor, 'released at once, the failure counted');
        }
        $job = new RecordingJob();
        $middleware()->handle($job, static fn (RecordingJob $job): bool => $job->ran = true);
        $this->assertFalse($job->ran, 'the circuit is open');
        // Put back until the 10 minutes that began with the first failure end, on the server's clock.
        $elapsed = (int) ceil((Servers::now() - $start) / 1000);
        $this->assertGreaterThanOrEqual(600 - $elapsed, $job->releasedFor);
        $this->assertLessThanOrEqual(600, $job->releasedFor);

        // The window ends (10 minutes on): the circuit closes, and a success clears its count.
        $this->assertSame(['app_laravel_throttles_exceptions:mailer'], $this->raw->keys('app_*'));
        $this->raw->pExpire('app_laravel_throttles_exceptions:mailer', 1);
        usleep(2000);
        $job = new RecordingJob();
        $middleware()->handle($job, static fn (RecordingJob $job): bool => $job->ran = true);
        $this->assertTrue($job->ran);
        $job = new RecordingJob();
        $middleware()->handle($job, $failing);
        $this->assertSame(0, $job->releasedFor);
        $middleware()->handle(new RecordingJob(), static fn (RecordingJob $job): bool => $job->ran = true);
        $this->assertSame([], $this->raw->keys('app_*'), 'a success clears the count');
    }

    private function request(): Request
    {
        $request = Request::create('/', 'GET', [], [], [], ['REMOTE_ADDR' => '10.0.0.1']);
        $route = new Route('GET', '/', static fn (): string => 'yes');
        $route->bind($request);
        $request->setRouteResolver(static fn (): Route => $route);

        return $request;
    }
}

/** A queued job as the middleware sees it: released, or run. */
final class RecordingJob
{
    public bool $ran = false;
    public ?int $releasedFor = null;

    public function release(int $delay = 0): void
    {
        $this->releasedFor = $delay;
    }
}
