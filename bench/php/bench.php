<?php

declare(strict_types=1);

/*
 * make bench's PHP part: each library's own Redis store against goblin-redis's, on one server at
 * a time, the server's CPU per decision and per lock side by side (bench/php/run.sh runs it on
 * every matrix server and writes bench/results/php.md).
 *
 *   php bench/php/bench.php --module PATH --server LABEL=BINARY... --out FILE [--quick]
 *
 * For each pair, each store makes the same decisions, one after another from this process over
 * one phpredis connection, on 1,000 keys, every one allowed (a lock: taken and released). "CPU
 * per decision" is the server's, measured two ways: INFO commandstats (the usec of every
 * command the decisions ran: a script's EVAL or EVALSHA with what it calls, the Goblin
 * commands, the GETs and SETs of a storage) and used_cpu_user + used_cpu_sys (the whole server
 * process, its event loop and its network included), each over the decisions made.
 */

use Goblin\Laravel\Cache\PhpRedisLock as GoblinLaravelLock;
use Goblin\Laravel\Limiters\ConcurrencyLimiter as GoblinConcurrencyLimiter;
use Goblin\Laravel\Limiters\DurationLimiter as GoblinDurationLimiter;
use Goblin\Symfony\Lock\GoblinStore;
use Goblin\Symfony\RateLimiter\RateLimiterFactory as GoblinRateLimiterFactory;
use Illuminate\Cache\PhpRedisLock;
use Illuminate\Redis\Connections\PhpRedisConnection;
use Illuminate\Redis\Limiters\ConcurrencyLimiter;
use Illuminate\Redis\Limiters\DurationLimiter;
use Symfony\Component\Cache\Adapter\RedisAdapter;
use Symfony\Component\Lock\Key;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\RateLimiter\RateLimiterFactory;
use Symfony\Component\RateLimiter\Storage\CacheStorage;

require dirname(__DIR__, 2) . '/.servers/php/app/vendor/autoload.php';
require_once 'Predis/autoload.php';
require_once 'Symfony/Component/Cache/autoload.php';
require_once 'Symfony/Component/Lock/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';
require_once 'Illuminate/autoload.php';

const KEYS = 1000;

/** Symfony's own limiter as a full-stack application has it: state in a cache pool, a lock around it. */
const STOCK_LIMITER = 'RateLimiterFactory, CacheStorage on RedisAdapter, LockFactory on RedisStore (four EVALs, two MGETs, a SETEX)';

/** @return array{module: string, servers: list<array{string, string}>, out: string, quick: bool} */
function options(array $argv): array
{
    $options = ['module' => '', 'servers' => [], 'out' => '', 'quick' => false];
    for ($i = 1; $i < count($argv); ++$i) {
        match ($argv[$i]) {
            '--module' => $options['module'] = $argv[++$i],
            '--out' => $options['out'] = $argv[++$i],
            '--server' => $options['servers'][] = explode('=', $argv[++$i], 2),
            '--quick' => $options['quick'] = true,
            default => throw new InvalidArgumentException("unknown argument {$argv[$i]}"),
        };
    }
    if ('' === $options['module'] || [] === $options['servers'] || '' === $options['out']) {
        throw new InvalidArgumentException('usage: bench.php --module PATH --server LABEL=BINARY... --out FILE [--quick]');
    }

    return $options;
}

/**
 * A server with the module on a free port; its process and port.
 *
 * @return array{resource, int}
 */
function start(string $binary, string $module): array
{
    $probe = stream_socket_server('tcp://127.0.0.1:0');
    $port = (int) substr((string) stream_socket_get_name($probe, false), strlen('127.0.0.1:'));
    fclose($probe);
    $dir = sys_get_temp_dir();
    $process = proc_open(
        [$binary, '--port', (string) $port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', $dir, '--loadmodule', $module],
        [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
        $pipes,
    );
    if (!is_resource($process)) {
        throw new RuntimeException("could not start $binary");
    }
    $deadline = microtime(true) + 30;
    while (true) {
        try {
            $redis = new Redis();
            $redis->connect('127.0.0.1', $port);
            $redis->ping();
            break;
        } catch (RedisException $e) {
            if (microtime(true) > $deadline) {
                throw new RuntimeException("$binary never answered on $port", 0, $e);
            }
            usleep(20_000);
        }
    }

    return [$process, $port];
}

/** The server's CPU so far: commandstats' usec summed (but INFO's and CONFIG's), and used_cpu in us. */
function cpu(Redis $admin): array
{
    $usec = 0;
    foreach ($admin->info('commandstats') as $name => $stats) {
        if (str_starts_with((string) $name, 'cmdstat_info') || str_starts_with((string) $name, 'cmdstat_config')) {
            continue;
        }
        preg_match('/usec=(\d+)/', (string) $stats, $match);
        $usec += (int) ($match[1] ?? 0);
    }
    $info = $admin->info('cpu');

    return [$usec, ((float) $info['used_cpu_user'] + (float) $info['used_cpu_sys']) * 1e6];
}

/**
 * The pairs: library, then [the library's store, its decision] and [goblin-redis's], each a
 * maker that gets a connected \Redis and returns what makes decision $i.
 *
 * @return list<array{string, string, array{array{string, Closure(Redis): Closure(int): mixed}, array{string, Closure(Redis): Closure(int): mixed}}}>
 */
function pairs(): array
{
    $laravel = static fn (Redis $redis): PhpRedisConnection => new PhpRedisConnection($redis);
    $symfonyLimiter = static function (string $policy, string $goblin): array {
        $config = ['id' => 'api', 'policy' => $policy, 'limit' => 1_000_000];
        $config += 'token_bucket' === $policy ? ['rate' => ['interval' => '1 second', 'amount' => 1_000_000]] : ['interval' => '60 seconds'];

        return [
            "Symfony RateLimiter 5.4 ($policy)",
            'a decision',
            [
                [STOCK_LIMITER, static function (Redis $redis) use ($config): Closure {
                    $factory = new RateLimiterFactory($config, new CacheStorage(new RedisAdapter($redis)), new LockFactory(new RedisStore($redis)));

                    return static fn (int $i) => $factory->create('k' . ($i % KEYS))->consume();
                }],
                ["goblin-redis's RateLimiterFactory ($goblin)", static function (Redis $redis) use ($config): Closure {
                    $factory = new GoblinRateLimiterFactory($config, $redis);

                    return static fn (int $i) => $factory->create('k' . ($i % KEYS))->consume();
                }],
            ],
        ];
    };

    return [
        ['Laravel 8 Redis::throttle (DurationLimiter)', 'a decision', [
            ['DurationLimiter (a Lua script)', static function (Redis $redis) use ($laravel): Closure {
                $connection = $laravel($redis);

                return static fn (int $i) => (new DurationLimiter($connection, 't' . ($i % KEYS), 1_000_000, 60))->acquire();
            }],
            ["goblin-redis's DurationLimiter (GOBLIN.FWINDOW)", static function (Redis $redis) use ($laravel): Closure {
                $connection = $laravel($redis);

                return static fn (int $i) => (new GoblinDurationLimiter($connection, 't' . ($i % KEYS), 1_000_000, 60))->acquire();
            }],
        ]],
        ['Laravel 8 Redis::funnel (ConcurrencyLimiter)', 'a slot taken and given back', [
            ['ConcurrencyLimiter (two Lua scripts over 5 slot keys)', static function (Redis $redis) use ($laravel): Closure {
                $connection = $laravel($redis);

                return static fn (int $i) => (new ConcurrencyLimiter($connection, 'f' . ($i % KEYS), 5, 60))->block(0, static fn () => null);
            }],
            ["goblin-redis's ConcurrencyLimiter (GOBLIN.ZWINDOW, GOBLIN.CAD)", static function (Redis $redis) use ($laravel): Closure {
                $connection = $laravel($redis);

                return static fn (int $i) => (new GoblinConcurrencyLimiter($connection, 'f' . ($i % KEYS), 5, 60))->block(0, static fn () => null);
            }],
        ]],
        ['Laravel 8 cache lock (PhpRedisLock)', 'a lock taken and released', [
            ['PhpRedisLock (SET NX EX, a Lua script)', static function (Redis $redis) use ($laravel): Closure {
                $connection = $laravel($redis);

                return static function (int $i) use ($connection): void {
                    $lock = new PhpRedisLock($connection, 'l' . ($i % KEYS), 10);
                    $lock->get() && $lock->release();
                };
            }],
            ["goblin-redis's PhpRedisLock (GOBLIN.LOCK, GOBLIN.CAD)", static function (Redis $redis) use ($laravel): Closure {
                $connection = $laravel($redis);

                return static function (int $i) use ($connection): void {
                    $lock = new GoblinLaravelLock($connection, 'l' . ($i % KEYS), 10);
                    $lock->get() && $lock->release();
                };
            }],
        ]],
        ['Symfony Lock 5.4', 'a lock taken and released', [
            ['RedisStore (two Lua scripts)', static function (Redis $redis): Closure {
                $store = new RedisStore($redis);

                return static function (int $i) use ($store): void {
                    $store->save($key = new Key('r' . ($i % KEYS)));
                    $store->delete($key);
                };
            }],
            ["goblin-redis's GoblinStore (GOBLIN.WLOCK, GOBLIN.RWUNLOCK)", static function (Redis $redis): Closure {
                $store = new GoblinStore($redis);

                return static function (int $i) use ($store): void {
                    $store->save($key = new Key('r' . ($i % KEYS)));
                    $store->delete($key);
                };
            }],
        ]],
        $symfonyLimiter('fixed_window', 'INCREX'),
        $symfonyLimiter('token_bucket', 'GOBLIN.GCRA'),
        $symfonyLimiter('sliding_window', 'GOBLIN.SWINDOW'),
    ];
}

/** @return array{float, float, float} commandstats us, used_cpu us, per decision; decisions per second */
function measure(int $port, Closure $make, int $decisions, int $warmup): array
{
    $redis = new Redis();
    $redis->connect('127.0.0.1', $port);
    $admin = new Redis();
    $admin->connect('127.0.0.1', $port);
    $admin->flushAll();
    $decide = $make($redis);
    for ($i = 0; $i < $warmup; ++$i) {
        $decide($i);
    }
    $admin->rawCommand('CONFIG', 'RESETSTAT');
    [$usec0, $cpu0] = cpu($admin);
    $start = hrtime(true);
    for ($i = 0; $i < $decisions; ++$i) {
        $decide($i);
    }
    $seconds = (hrtime(true) - $start) / 1e9;
    [$usec1, $cpu1] = cpu($admin);

    return [($usec1 - $usec0) / $decisions, ($cpu1 - $cpu0) / $decisions, $decisions / $seconds];
}

function number(float $value, int $decimals = 2): string
{
    return number_format($value, $decimals, '.', ',');
}

$options = options($argv);
$decisions = $options['quick'] ? 200 : 5_000;
$warmup = $options['quick'] ? 20 : 500;
$rows = [];
$ratios = [[], [], []];
$versions = [];
foreach ($options['servers'] as [$label, $binary]) {
    [$process, $port] = start($binary, $options['module']);
    try {
        $probe = new Redis();
        $probe->connect('127.0.0.1', $port);
        $info = $probe->info('server');
        $versions[] = sprintf('%s (%s)', $label, $info['valkey_version'] ?? $info['redis_version']);
        foreach (pairs() as [$library, $unit, [[$stockName, $stock], [$goblinName, $goblin]]]) {
            $base = measure($port, $stock, $decisions, $warmup);
            $ours = measure($port, $goblin, $decisions, $warmup);
            $rows[] = [$label, $library, $unit, $stockName, $base, null];
            $rows[] = [$label, $library, $unit, $goblinName, $ours, [$ours[0] / $base[0], $ours[1] / $base[1], $ours[2] / $base[2]]];
            foreach ([0, 1, 2] as $k) {
                $ratios[$k][] = $ours[$k] / $base[$k];
            }
            fwrite(STDERR, sprintf("%s: %s: %.2f / %.2f us\n", $label, $library, $base[0], $ours[0]));
        }
    } finally {
        proc_terminate($process);
        proc_close($process);
    }
}

$mean = static fn (array $values): float => exp(array_sum(array_map('log', $values)) / count($values));
$lines = [
    '## Rate limiters and locks: server CPU (PHP)',
    '',
    sprintf(
        '`make bench` (bench/php/bench.php), %s, %s with %d cores; %s on loopback; PHP %s, phpredis %s. Generated: do not edit.',
        date('Y-m-d'),
        php_uname('m'),
        (int) shell_exec('nproc'),
        implode(', ', $versions),
        PHP_VERSION,
        phpversion('redis'),
    ),
    '',
    sprintf(
        'Each store made %s decisions (after %s to warm up) over %s keys, one after another from one PHP process on one '
        . 'phpredis connection, every one allowed (a lock: taken, then released). "CPU per decision" is the server\'s: from '
        . 'INFO commandstats (the usec of every command the decisions ran: a script\'s EVAL or EVALSHA with what it calls, '
        . 'the Goblin commands, a storage\'s GET and SET) and from used_cpu_user + used_cpu_sys (the whole server process, '
        . 'its event loop and network included). The ratios are goblin-redis\'s store over the library\'s own.',
        number($decisions, 0),
        number($warmup, 0),
        number(KEYS, 0),
    ),
    '',
    '| server | library | per | store | CPU per decision, us (commandstats) | CPU per decision, us (used_cpu) | decisions/s '
    . '| CPU ratio (commandstats) | CPU ratio (used_cpu) | speed ratio |',
    '|---|---|---|---|---:|---:|---:|---:|---:|---:|',
];
foreach ($rows as [$server, $library, $unit, $store, [$usec, $cpu, $rate], $ratio]) {
    $lines[] = sprintf(
        '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |',
        $server,
        $library,
        $unit,
        $store,
        number($usec),
        number($cpu),
        number($rate, 0),
        null === $ratio ? '' : number($ratio[0]),
        null === $ratio ? '' : number($ratio[1]),
        null === $ratio ? '' : number($ratio[2]),
    );
}
$lines[] = '';
$lines[] = sprintf(
    'Geometric means over the %d pairs: CPU per decision %sx (commandstats), %sx (used_cpu); decisions per second %sx.',
    count($ratios[0]),
    number($mean($ratios[0])),
    number($mean($ratios[1])),
    number($mean($ratios[2])),
);
file_put_contents($options['out'], implode("\n", $lines) . "\n");
fwrite(STDERR, "bench/php: {$options['out']}\n");
