<?php

declare(strict_types=1);

[$host, $port] = explode(':', env('GOBLIN_REDIS', '127.0.0.1:6379'));

return [
    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'options' => ['prefix' => 'example_'],
        'default' => ['host' => $host, 'port' => (int) $port, 'database' => 0],
        'cache' => ['host' => $host, 'port' => (int) $port, 'database' => 1],
    ],
];
