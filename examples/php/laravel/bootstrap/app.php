<?php

declare(strict_types=1);

/*
 * A Laravel 8 application, as laravel/laravel's skeleton makes one, cut to what this example
 * needs. Laravel itself comes from Debian's packages; goblin-redis from vendor/ (Composer), its
 * service provider discovered from its composer.json.
 */

require_once 'Illuminate/autoload.php';
require __DIR__ . '/../vendor/autoload.php';

$app = new Illuminate\Foundation\Application(dirname(__DIR__));
$app->singleton(Illuminate\Contracts\Http\Kernel::class, App\Http\Kernel::class);
$app->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, Illuminate\Foundation\Exceptions\Handler::class);

return $app;
