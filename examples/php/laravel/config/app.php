<?php

declare(strict_types=1);

return [
    'name' => 'goblin-example',
    'env' => 'production',
    'debug' => false,
    'url' => 'http://127.0.0.1',
    'timezone' => 'UTC',
    'locale' => 'en',
    'key' => 'base64:' . base64_encode(str_repeat('g', 32)),
    'cipher' => 'AES-256-CBC',
    'providers' => [
        Illuminate\Bus\BusServiceProvider::class,
        Illuminate\Cache\CacheServiceProvider::class,
        Illuminate\Filesystem\FilesystemServiceProvider::class,
        Illuminate\Queue\QueueServiceProvider::class,
        Illuminate\Redis\RedisServiceProvider::class,
        App\Providers::class,
    ],
    'aliases' => [],
];
