<?php

declare(strict_types=1);

/*
 * The tests' autoloading: php/ as an application has it (installed by Composer from the clone
 * into .servers/php/app by scripts/php.sh), the libraries from Debian's packages, and the
 * suites' own classes from Debian's source packages (.servers/php/src).
 *
 * GOBLIN_IN_PLACE names the host classes whose place Goblin's take, for a library's own suite
 * to run unmodified on them: `symfony-lock` (RedisStore) or `laravel` (the limiters and the
 * Redis cache locks). Each host class name is then an alias of Goblin's, made before the
 * host's own autoloader could load the original.
 */

$root = dirname(__DIR__, 2);
$sources = $root . '/.servers/php/src';

require $root . '/.servers/php/app/vendor/autoload.php';
require_once 'Predis/autoload.php';
require_once 'Mockery/autoload.php';
require_once 'Symfony/Component/Lock/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';
require_once 'Illuminate/autoload.php';

$prefixes = [
    'Goblin\\Tests\\' => __DIR__ . '/',
    'Symfony\\Component\\Lock\\Tests\\' => $sources . '/symfony/src/Symfony/Component/Lock/Tests/',
    'Illuminate\\Tests\\' => $sources . '/laravel/tests/',
];
spl_autoload_register(static function (string $class) use ($prefixes): void {
    foreach ($prefixes as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }

            return;
        }
    }
});

$inPlace = [
    'symfony-lock' => [
        'Symfony\\Component\\Lock\\Store\\RedisStore' => Goblin\Symfony\Lock\GoblinStore::class,
    ],
    'laravel' => [
        'Illuminate\\Redis\\Limiters\\DurationLimiter' => Goblin\Laravel\Limiters\DurationLimiter::class,
        'Illuminate\\Redis\\Limiters\\ConcurrencyLimiter' => Goblin\Laravel\Limiters\ConcurrencyLimiter::class,
        'Illuminate\\Cache\\RedisLock' => Goblin\Laravel\Cache\RedisLock::class,
        'Illuminate\\Cache\\PhpRedisLock' => Goblin\Laravel\Cache\PhpRedisLock::class,
    ],
];
$which = getenv('GOBLIN_IN_PLACE');
if (false !== $which && '' !== $which) {
    $aliases = $inPlace[$which] ?? throw new RuntimeException("GOBLIN_IN_PLACE: no such set: $which");
    spl_autoload_register(static function (string $class) use ($aliases): void {
        if (isset($aliases[$class])) {
            class_alias($aliases[$class], $class);
        }
    }, true, true);
}
