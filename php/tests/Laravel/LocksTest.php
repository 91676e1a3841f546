<?php

declare(strict_types=1);

namespace Goblin\Tests\Laravel;

use Goblin\Laravel\Cache\PhpRedisLock;
use Goblin\Laravel\Cache\RedisLock;
use Goblin\Tests\Servers;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Support\Facades\Cache;
use PHPUnit\Framework\TestCase;

/**
 * The `goblin` cache store's locks, on phpredis and on Predis: the ground of Laravel's
 * RedisCacheLockTest and PhpRedisCacheLockTest (which need Orchestra Testbench), and what they
 * do not prove: the key Laravel would write, waiting in line, one command per wait.
 */
final class LocksTest extends TestCase
{
    private \Redis $raw;

    public static function clients(): array
    {
        return ['phpredis' => ['phpredis'], 'predis' => ['predis']];
    }

    private function boot(string $client): void
    {
        Application::make($client);
        $this->raw = Servers::redis();
        $this->raw->select(3);
        $this->raw->flushDB();
    }

    /** The `goblin` store, which makes the locks. */
    private function locks(): LockProvider
    {
        $store = Cache::store('goblin')->getStore();
        \assert($store instanceof LockProvider);

        return $store;
    }

    /** @dataProvider clients */
    public function testALockIsGoblinsOnTheKeyLaravelWouldWrite(string $client): void
    {
        $this->boot($client);
        $lock = $this->locks()->lock('report', 10);
        $this->assertInstanceOf('phpredis' === $client ? PhpRedisLock::class : RedisLock::class, $lock);
        $this->assertTrue($lock->get());
        // The connection's prefix, then the cache's, then the name; the owner as it is, with a 10 s lease.
        $this->assertSame($lock->owner(), $this->raw->get('app_cache_:report'));
        $ttl = $this->raw->pTTL('app_cache_:report');
        $this->assertGreaterThan(9000, $ttl);
        $this->assertLessThanOrEqual(10000, $ttl);
        $this->assertFalse($this->locks()->lock('report', 10)->get());
        $this->assertFalse($this->locks()->lock('report', 10)->release());
        $this->assertTrue($lock->release());
        $this->assertSame(0, $this->raw->exists('app_cache_:report'));
        $this->assertTrue($this->locks()->lock('report', 10)->get());
    }

    /** @dataProvider clients */
    public function testNoSecondsIsNoLease(string $client): void
    {
        $this->boot($client);
        $this->assertTrue($this->locks()->lock('forever')->get());
        $this->assertSame(-1, $this->raw->pTTL('app_cache_:forever'));
    }

    /** @dataProvider clients */
    public function testBlockWaitsInLineUntilTheLeaseEndsWithOneCommand(string $client): void
    {
        $this->boot($client);
        $before = Servers::calls();
        $start = Servers::now();
        $this->assertTrue($this->locks()->lock('line', 1)->get());
        $second = $this->locks()->lock('line', 10);
        $this->assertSame('ran', $second->block(5, static fn (): string => 'ran'));
        // Granted when the first lease ended, on the server's clock, and not before.
        $this->assertGreaterThanOrEqual($start + 1000, Servers::now());
        $after = Servers::calls();
        $this->assertSame(1, $after['goblin.block'] - ($before['goblin.block'] ?? 0), 'one GOBLIN.BLOCK, no polling');
        $this->assertSame(0, $this->raw->exists('app_cache_:line'), 'released after the callback');
    }

    /** @dataProvider clients */
    public function testBlockGivesUpAfterItsSeconds(string $client): void
    {
        $this->boot($client);
        $this->assertTrue($this->locks()->lock('held', 30)->get());
        $start = Servers::now();
        try {
            $this->locks()->lock('held', 10)->block(1);
            $this->fail('the lock was held');
        } catch (LockTimeoutException) {
        }
        $this->assertGreaterThanOrEqual($start + 1000, Servers::now());
    }

    /** @dataProvider clients */
    public function testAFailedCallbackReleasesTheLock(string $client): void
    {
        $this->boot($client);
        try {
            $this->locks()->lock('failing', 10)->block(1, static function (): void {
                throw new \RuntimeException('failed');
            });
        } catch (\RuntimeException) {
        }
        $this->assertTrue($this->locks()->lock('failing', 1)->get());
    }

    /** @dataProvider clients */
    public function testAnOwnerReleasesItsRestoredLockAndOnlyIt(string $client): void
    {
        $this->boot($client);
        $first = $this->locks()->lock('owned', 10);
        $this->assertTrue($first->get());
        $this->assertFalse($this->locks()->restoreLock('owned', 'someone else')->release());
        $this->assertTrue($this->locks()->restoreLock('owned', $first->owner())->release());
        $this->assertTrue($this->locks()->lock('owned')->get());
        $this->locks()->lock('owned')->forceRelease();
        $this->assertSame(0, $this->raw->exists('app_cache_:owned'));
    }

    /** @dataProvider clients */
    public function testTheLockConnectionIsTheStores(string $client): void
    {
        $this->boot($client);
        $lock = $this->locks()->lock('foo');
        \assert($lock instanceof RedisLock);
        $this->assertSame('default', $lock->getConnectionName());
    }

    /** The owner goes as it is, whatever the phpredis connection serializes or compresses. */
    public function testOwnersAreRawWhateverTheSerializer(): void
    {
        $this->boot('phpredis');
        $serializers = [\Redis::SERIALIZER_NONE, \Redis::SERIALIZER_PHP];
        if (\defined('Redis::SERIALIZER_JSON')) {
            $serializers[] = \Redis::SERIALIZER_JSON;
        }
        foreach ($serializers as $serializer) {
            $store = Cache::store('goblin')->getStore();
            \assert($store instanceof \Illuminate\Cache\RedisStore);
            $store->lockConnection()->client()->setOption(\Redis::OPT_SERIALIZER, $serializer);
            $lock = $store->lock('serialized', 10);
            $this->assertTrue($lock->get());
            $this->assertSame($lock->owner(), $this->raw->get('app_cache_:serialized'));
            $this->assertFalse($store->lock('serialized', 10)->get());
            $this->assertTrue($lock->release());
            $this->assertNull($store->lockConnection()->get($store->getPrefix() . 'serialized'));
        }
    }
}
