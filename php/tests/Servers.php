<?php

declare(strict_types=1);

namespace Goblin\Tests;

/**
 * The servers tests/php.rs started: GOBLIN_TEST_SERVER (host:port, with Goblin),
 * GOBLIN_TEST_BARE (the same server without it) and GOBLIN_TEST_CLUSTER (three nodes with it,
 * space-separated), each optional but the first.
 */
final class Servers
{
    /** @return array{string, int} */
    public static function goblin(): array
    {
        return self::address('GOBLIN_TEST_SERVER') ?? throw new \RuntimeException('GOBLIN_TEST_SERVER is not set');
    }

    /** @return array{string, int}|null */
    public static function bare(): ?array
    {
        return self::address('GOBLIN_TEST_BARE');
    }

    /** @return list<string> */
    public static function cluster(): array
    {
        $nodes = getenv('GOBLIN_TEST_CLUSTER');

        return false === $nodes || '' === $nodes ? [] : explode(' ', $nodes);
    }

    public static function redis(?array $address = null): \Redis
    {
        [$host, $port] = $address ?? self::goblin();
        $redis = new \Redis();
        $redis->connect($host, $port);

        return $redis;
    }

    public static function predis(?array $address = null, array $options = []): \Predis\Client
    {
        [$host, $port] = $address ?? self::goblin();

        return new \Predis\Client(['host' => $host, 'port' => $port], $options);
    }

    /** `INFO commandstats` calls by command (`goblin.lock`, `module|list`, ...). */
    public static function calls(?array $address = null): array
    {
        $calls = [];
        foreach (self::redis($address)->info('commandstats') as $name => $stats) {
            if (preg_match('/calls=(\d+)/', (string) $stats, $match)) {
                $calls[substr((string) $name, \strlen('cmdstat_'))] = (int) $match[1];
            }
        }

        return $calls;
    }

    /** The server's clock, in milliseconds (TIME). */
    public static function now(?\Redis $redis = null): int
    {
        [$seconds, $micros] = ($redis ?? self::redis())->time();

        return (int) $seconds * 1000 + intdiv((int) $micros, 1000);
    }

    /** @return array{string, int}|null */
    private static function address(string $variable): ?array
    {
        $value = getenv($variable);
        if (false === $value || '' === $value) {
            return null;
        }
        [$host, $port] = explode(':', $value);

        return [$host, (int) $port];
    }
}
