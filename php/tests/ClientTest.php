<?php

declare(strict_types=1);

namespace Goblin\Tests;

use Goblin\Client;
use Goblin\GoblinModuleException;
use Goblin\Laravel\Limiters\DurationLimiter;
use Goblin\Symfony\Lock\GoblinStore;
use Goblin\Symfony\RateLimiter\RateLimiterFactory;
use PHPUnit\Framework\TestCase;
use Symfony\Component\Lock\Key;

/**
 * The client under every store and limiter: the module check (`MODULE LIST` once per
 * connection, one clear error without Goblin), keys prefixed as the client prefixes them, and a
 * cluster's routing, on phpredis and on Predis.
 */
final class ClientTest extends TestCase
{
    public static function clients(): array
    {
        return ['phpredis' => ['phpredis'], 'predis' => ['predis']];
    }

    private static function client(string $kind, ?array $address = null, array $options = []): object
    {
        if ('predis' === $kind) {
            return Servers::predis($address, $options);
        }
        $redis = Servers::redis($address);
        foreach ($options as $option => $value) {
            $redis->setOption($option, $value);
        }

        return $redis;
    }

    /** @dataProvider clients */
    public function testAServerWithoutGoblinIsOneClearErrorBeforeAnyGoblinCommand(string $kind): void
    {
        $bare = Servers::bare() ?? throw new \RuntimeException('GOBLIN_TEST_BARE is not set');
        $before = Servers::calls($bare);
        $entryPoints = [
            'Symfony Lock' => static fn () => (new GoblinStore(self::client($kind, $bare)))->save(new Key('report')),
            'Symfony RateLimiter' => static fn () => (new RateLimiterFactory(
                ['id' => 'api', 'policy' => 'sliding_window', 'limit' => 1, 'interval' => '1 minute'],
                self::client($kind, $bare),
            ))->create('x')->consume(),
            'Laravel' => static fn () => (new DurationLimiter(self::client($kind, $bare), 'api', 1, 60))->acquire(),
        ];
        foreach ($entryPoints as $name => $entryPoint) {
            try {
                $entryPoint();
                $this->fail("$name ran on a server without Goblin");
            } catch (GoblinModuleException $e) {
                $this->assertStringContainsString('MODULE LOAD /path/to/libgoblin.so', $e->getMessage(), $name);
                $this->assertStringContainsString('MODULE LIST lists none', $e->getMessage(), $name);
            }
        }
        $after = Servers::calls($bare);
        $this->assertSame(3, $after['module|list'] - ($before['module|list'] ?? 0), 'asked on each connection');
        $this->assertSame(
            [],
            array_filter(array_keys($after), static fn (string $name): bool => str_starts_with($name, 'goblin.') || 'increx' === $name),
            'nothing was sent but MODULE LIST',
        );
    }

    /** @dataProvider clients */
    public function testAFailedCheckIsAskedAgainAndAPassedOneIsNot(string $kind): void
    {
        $bare = Servers::bare() ?? throw new \RuntimeException('GOBLIN_TEST_BARE is not set');
        $store = new GoblinStore(self::client($kind, $bare));
        for ($attempt = 1; $attempt <= 2; ++$attempt) {
            try {
                $store->save(new Key('again'));
                $this->fail('saved without Goblin');
            } catch (GoblinModuleException) {
            }
        }
        $before = Servers::calls();
        $store = new GoblinStore(self::client($kind));
        foreach (range(1, 5) as $i) {
            $key = new Key("once-$i");
            $store->save($key);
            $store->putOffExpiration($key, 10);
            $this->assertTrue($store->exists($key));
            $store->delete($key);
        }
        $after = Servers::calls();
        $this->assertSame(1, $after['module|list'] - ($before['module|list'] ?? 0), 'MODULE LIST once for the connection');
        $this->assertSame(5, $after['goblin.wlock'] - ($before['goblin.wlock'] ?? 0));
    }

    public function testAServerThatRefusesModuleListIsTakenAtItsWord(): void
    {
        $bare = Servers::bare() ?? throw new \RuntimeException('GOBLIN_TEST_BARE is not set');
        foreach ([Servers::goblin(), $bare] as $address) {
            $admin = Servers::redis($address);
            $admin->rawCommand('ACL', 'SETUSER', 'app', 'on', '>secret', '~*', '&*', '+@all', '-module');
        }
        $limited = static function (array $address): \Redis {
            $redis = Servers::redis($address);
            $redis->auth(['app', 'secret']);

            return $redis;
        };
        $store = new GoblinStore($limited(Servers::goblin()));
        $store->save($key = new Key('acl'));
        $this->assertTrue($store->exists($key));
        try {
            (new GoblinStore($limited($bare)))->save(new Key('acl'));
            $this->fail('saved without Goblin');
        } catch (GoblinModuleException $e) {
            $this->assertStringContainsString('the server has no GOBLIN.WLOCK', $e->getMessage());
        }
    }

    /** @dataProvider clients */
    public function testKeysArePrefixedAsTheClientPrefixesThem(string $kind): void
    {
        $options = 'predis' === $kind ? ['prefix' => 'app:'] : [\Redis::OPT_PREFIX => 'app:'];
        $redis = self::client($kind, null, $options);
        $this->assertSame('app:report', Client::of($redis)->prefixed('report'));
        $store = new GoblinStore($redis);
        $store->save($key = new Key('report'));
        $raw = Servers::redis();
        $this->assertSame(1, $raw->exists('app:report'));
        $this->assertSame(0, $raw->exists('report'));
        $store->delete($key);
        $this->assertSame(0, $raw->exists('app:report'));
    }

    /** @dataProvider clients */
    public function testACommandGoesToTheNodeThatOwnsItsKey(string $kind): void
    {
        $nodes = Servers::cluster();
        if ([] === $nodes) {
            throw new \RuntimeException('GOBLIN_TEST_CLUSTER is not set');
        }
        // Without a prefix, and with one (a key's slot is its prefixed name's); tests/php.rs then
        // finds no MOVED in the nodes' errorstats.
        foreach (['', 'app:'] as $prefix) {
            if ('predis' === $kind) {
                $options = ['cluster' => 'redis'] + ('' === $prefix ? [] : ['prefix' => $prefix]);
                $redis = new \Predis\Client(array_map(static fn (string $node): string => "tcp://$node", $nodes), $options);
            } else {
                $redis = new \RedisCluster(null, $nodes);
                $redis->setOption(\Redis::OPT_PREFIX, $prefix);
            }
            $store = new GoblinStore($redis);
            $config = ['id' => 'api', 'policy' => 'token_bucket', 'limit' => 2, 'rate' => ['interval' => '1 minute']];
            $factory = new RateLimiterFactory($config, $redis);
            for ($i = 1; $i <= 30; ++$i) {
                $store->save($key = new Key("cluster-$i"));
                $this->assertTrue($store->exists($key));
                $this->assertSame(1, (int) $redis->exists("cluster-$i"), 'the client finds it under its prefix');
                $store->putOffExpiration($key, 5);
                $store->delete($key);
                $this->assertFalse($store->exists($key));
                $this->assertTrue($factory->create("k$i")->consume()->isAccepted());
            }
        }
    }
}
