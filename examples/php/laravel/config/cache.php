<?php

declare(strict_types=1);

return [
    'default' => 'goblin',
    'prefix' => 'example_cache',
    'stores' => [
        // Laravel's Redis cache store, its locks Goblin's.
        'goblin' => ['driver' => 'goblin', 'connection' => 'cache', 'lock_connection' => 'default'],
    ],
];
