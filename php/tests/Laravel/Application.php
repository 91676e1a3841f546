<?php

declare(strict_types=1);

namespace Goblin\Tests\Laravel;

use Goblin\Laravel\GoblinServiceProvider;
use Goblin\Tests\Servers;
use Illuminate\Cache\CacheServiceProvider;
use Illuminate\Config\Repository;
use Illuminate\Foundation\Application as LaravelApplication;
use Illuminate\Redis\RedisServiceProvider;
use Illuminate\Support\Facades\Facade;

/**
 * A Laravel application as config/ makes one, without HTTP or a console: Redis (the client
 * given, the prefix `app_`, database 3), the cache (`redis` and `goblin` stores, prefix
 * `cache_`), and GoblinServiceProvider, discovered as composer.json's `extra.laravel` names it.
 */
final class Application
{
    public static function make(string $client, array $goblin = []): LaravelApplication
    {
        [$host, $port] = Servers::goblin();
        $app = new LaravelApplication(sys_get_temp_dir());
        $app->instance('config', new Repository([
            'app' => ['name' => 'goblin-test'],
            'goblin' => $goblin,
            'database' => ['redis' => [
                'client' => $client,
                'options' => ['prefix' => 'app_'],
                'default' => ['host' => $host, 'port' => $port, 'database' => 3],
                'cache' => ['host' => $host, 'port' => $port, 'database' => 3],
            ]],
            'cache' => [
                'default' => 'goblin',
                'prefix' => 'cache_',
                'stores' => [
                    'redis' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'default'],
                    'goblin' => ['driver' => 'goblin', 'connection' => 'cache', 'lock_connection' => 'default'],
                ],
            ],
        ]));
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($app);
        $app->register(RedisServiceProvider::class);
        $app->register(CacheServiceProvider::class);
        $app->register(self::discovered());

        return $app;
    }

    /** The provider php/composer.json's `extra.laravel.providers` names, as package discovery reads it. */
    private static function discovered(): string
    {
        $composer = json_decode((string) file_get_contents(__DIR__ . '/../../composer.json'), true, 512, \JSON_THROW_ON_ERROR);
        $providers = $composer['extra']['laravel']['providers'];
        \assert([GoblinServiceProvider::class] === $providers);

        return $providers[0];
    }
}
