<?php

declare(strict_types=1);

/*
 * The front controller: Symfony's HttpKernel and Routing, the controller's services made by
 * hand where a full-stack application's container would make them from config/services.yaml
 * (docs/php.md shows that configuration). GOBLIN_REDIS names the server (host:port).
 */

use App\Controller\ReportController;
use Goblin\Symfony\Lock\GoblinStore;
use Goblin\Symfony\RateLimiter\RateLimiterFactory;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\RequestStack;
use Symfony\Component\HttpKernel\Controller\ArgumentResolver;
use Symfony\Component\HttpKernel\Controller\ControllerResolver;
use Symfony\Component\HttpKernel\EventListener\RouterListener;
use Symfony\Component\HttpKernel\HttpKernel;
use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Routing\Matcher\UrlMatcher;
use Symfony\Component\Routing\RequestContext;
use Symfony\Component\Routing\Route;
use Symfony\Component\Routing\RouteCollection;

require __DIR__ . '/../vendor/autoload.php';
require_once 'Symfony/Component/HttpKernel/autoload.php';
require_once 'Symfony/Component/Routing/autoload.php';
require_once 'Symfony/Component/Lock/autoload.php';
require_once 'Symfony/Component/RateLimiter/autoload.php';

[$host, $port] = explode(':', getenv('GOBLIN_REDIS') ?: '127.0.0.1:6379');
$redis = new Redis();
$redis->connect($host, (int) $port);

$controller = new ReportController(
    new RateLimiterFactory(['id' => 'api', 'policy' => 'sliding_window', 'limit' => 3, 'interval' => '10 seconds'], $redis),
    new LockFactory(new GoblinStore($redis, 30)),
    $redis,
);

$routes = new RouteCollection();
$routes->add('quote', new Route('/api/quote', ['_controller' => [$controller, 'quote']], methods: ['GET']));
$routes->add('publish', new Route('/reports/{id}/publish', ['_controller' => [$controller, 'publish']], methods: ['POST']));

$requests = new RequestStack();
$dispatcher = new EventDispatcher();
$dispatcher->addSubscriber(new RouterListener(new UrlMatcher($routes, new RequestContext()), $requests));
$kernel = new HttpKernel($dispatcher, new ControllerResolver(), $requests, new ArgumentResolver());

$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
