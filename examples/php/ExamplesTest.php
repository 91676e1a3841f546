<?php

declare(strict_types=1);

namespace Goblin\Tests\Examples;

use Goblin\Tests\Servers;
use PHPUnit\Framework\TestCase;

/**
 * The example applications (examples/php/symfony, examples/php/laravel), each served by PHP's
 * built-in server on loopback as its own process, driven over HTTP past their limits.
 */
final class ExamplesTest extends TestCase
{
    /** @var array<string, array{resource, int}> the running servers: process, port */
    private static array $servers = [];

    public static function tearDownAfterClass(): void
    {
        foreach (self::$servers as [$process]) {
            proc_terminate($process);
            proc_close($process);
        }
        self::$servers = [];
    }

    /** The example `$name` served on a free port (started once), with `$workers` workers. */
    private static function serve(string $name, int $workers = 1): int
    {
        if (isset(self::$servers[$name])) {
            return self::$servers[$name][1];
        }
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr((string) stream_socket_get_name($probe, false), \strlen('127.0.0.1:'));
        fclose($probe);
        [$host, $redisPort] = Servers::goblin();
        $env = ['GOBLIN_REDIS' => "$host:$redisPort", 'PHP_CLI_SERVER_WORKERS' => (string) $workers, 'PATH' => getenv('PATH')];
        $process = proc_open(
            ['php', '-S', "127.0.0.1:$port", '-t', __DIR__ . "/$name/public"],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            __DIR__ . "/$name",
            $env,
        );
        self::assertIsResource($process);
        self::$servers[$name] = [$process, $port];
        // Ready when it accepts a connection.
        $deadline = microtime(true) + 30;
        while (false === ($socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 1))) {
            self::assertLessThan($deadline, microtime(true), "$name never listened on $port");
            usleep(20_000);
        }
        fclose($socket);

        return $port;
    }

    /**
     * Sends a request; its socket, to read the response from.
     *
     * @return resource
     */
    private static function send(int $port, string $method, string $path)
    {
        $socket = stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5);
        self::assertNotFalse($socket, $error);
        fwrite($socket, "$method $path HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Length: 0\r\n\r\n");

        return $socket;
    }

    /**
     * @param resource $socket
     *
     * @return array{int, array<string, string>, mixed} status, headers (lower case), JSON body
     */
    private static function read($socket): array
    {
        stream_set_timeout($socket, 30);
        $raw = (string) stream_get_contents($socket);
        fclose($socket);
        [$head, $body] = explode("\r\n\r\n", $raw, 2) + [1 => ''];
        $lines = explode("\r\n", $head);
        preg_match('/^HTTP\/\S+ (\d+)/', (string) array_shift($lines), $status);
        $headers = [];
        foreach ($lines as $line) {
            [$name, $value] = explode(':', $line, 2) + [1 => ''];
            $headers[strtolower(trim($name))] = trim($value);
        }

        return [(int) ($status[1] ?? 0), $headers, json_decode($body, true)];
    }

    private static function request(int $port, string $method, string $path): array
    {
        return self::read(self::send($port, $method, $path));
    }

    public function testTheSymfonyQuoteApiRefusesTheFourthRequestInTenSeconds(): void
    {
        $port = self::serve('symfony');
        Servers::redis()->del('api-127.0.0.1');
        // Its sliding window's are the server's, aligned to its epoch: start early in one, so
        // that the four requests fall in it.
        $into = Servers::now() % 10000;
        if ($into > 7000) {
            usleep((10000 - $into + 50) * 1000);
        }
        $remaining = [];
        for ($i = 1; $i <= 3; ++$i) {
            [$status, $headers] = self::request($port, 'GET', '/api/quote');
            $this->assertSame(200, $status);
            $remaining[] = $headers['x-ratelimit-remaining'];
        }
        $this->assertSame(['2', '1', '0'], $remaining);
        [$status, $headers, $body] = self::request($port, 'GET', '/api/quote');
        $this->assertSame(429, $status);
        $this->assertSame('Too Many Requests', $body['error']);
        $this->assertGreaterThanOrEqual(1, (int) $headers['retry-after']);
        $this->assertLessThanOrEqual(10, (int) $headers['retry-after']);
    }

    public function testSymfonyPublishersOfOneReportWaitInLineInTheServer(): void
    {
        $port = self::serve('symfony', 2);
        $before = Servers::calls();
        $first = self::send($port, 'POST', '/reports/9/publish?work=500');
        $second = self::send($port, 'POST', '/reports/9/publish?work=500');
        [$status1, , $a] = self::read($first);
        [$status2, , $b] = self::read($second);
        $this->assertSame([200, 200], [$status1, $status2]);
        [$earlier, $later] = $a['acquired_ms'] <= $b['acquired_ms'] ? [$a, $b] : [$b, $a];
        // One at a time, on the server's clock: the second held it only after the first let go.
        $this->assertGreaterThanOrEqual($earlier['released_ms'], $later['acquired_ms']);
        $calls = Servers::calls();
        $this->assertSame(2, $calls['goblin.bwlock'] - ($before['goblin.bwlock'] ?? 0), 'one GOBLIN.BWLOCK each, no polling');
    }

    public function testTheLaravelThrottledRouteRefusesTheFourthRequestInAMinute(): void
    {
        $port = self::serve('laravel');
        $redis = Servers::redis();
        foreach ($redis->keys('example_*') as $key) {
            $redis->del($key);
        }
        $before = Servers::calls();
        $remaining = [];
        for ($i = 1; $i <= 3; ++$i) {
            [$status, $headers, $body] = self::request($port, 'GET', '/api/ping');
            $this->assertSame(200, $status);
            $this->assertSame(['pong' => true], $body);
            $remaining[] = $headers['x-ratelimit-remaining'];
        }
        $this->assertSame(['2', '1', '0'], $remaining);
        [$status, $headers] = self::request($port, 'GET', '/api/ping');
        $this->assertSame(429, $status);
        $this->assertSame('0', $headers['x-ratelimit-remaining']);
        $this->assertGreaterThanOrEqual(1, (int) $headers['retry-after']);
        $this->assertLessThanOrEqual(60, (int) $headers['retry-after']);
        $calls = Servers::calls();
        $this->assertSame(4, $calls['goblin.fwindow'] - ($before['goblin.fwindow'] ?? 0), 'a GOBLIN.FWINDOW a request');
        $this->assertSame($before['eval'] ?? 0, $calls['eval'] ?? 0, 'no script');
    }

    public function testTheLaravelImportJobRunsOnceAMinutePerAccount(): void
    {
        $port = self::serve('laravel');
        $redis = Servers::redis();
        foreach ($redis->keys('example_*') as $key) {
            $redis->del($key);
        }
        $this->assertSame(['account' => 'a1', 'ran' => 1], self::request($port, 'POST', '/accounts/a1/import')[2]);
        $this->assertSame(['account' => 'a1', 'ran' => 1], self::request($port, 'POST', '/accounts/a1/import')[2], 'released, not run');
        $this->assertSame(['account' => 'b2', 'ran' => 1], self::request($port, 'POST', '/accounts/b2/import')[2]);
        $this->assertSame([], array_values(array_filter(
            $redis->keys('example_*'),
            static fn (string $key): bool => str_contains($key, 'import:') || 'example_imports' === $key,
        )), 'the funnel slot and the lock were given back');
    }
}
